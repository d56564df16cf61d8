/* protocol: the one rule for a value that becomes part of a line of a
 * protocol or of a file's header: the request line of HTTP or one of its
 * header fields, a WARC header or warcinfo field, a file name written in
 * one.  It may hold no CR, LF or NUL.  A CR or an LF ends the line there,
 * and what follows is read as a line of its own: a header smuggled into
 * the request (sc-fetch -A $'bot\r\nX-Evil: 1').  A NUL cuts the C string
 * a library is handed, so that another value goes out than the one that
 * was checked.  (RFC 9110, section 5.5: "Field values containing CR, LF,
 * or NUL characters are invalid and dangerous".)
 *
 * Its setters apply it, never their callers: the option tables' parser
 * (lib/kit/opt.c: every program's options, and libsc's sc_fetcher_setopt
 * and sc_fetcher_setopt_argv, which use sc-fetch's table) and the engine's
 * check of a record's url and request (lib/engine/fetch_submit.c). */
#ifndef SC_PROTOCOL_H
#define SC_PROTOCOL_H

#include <stdbool.h>
#include <stddef.h>

/* The refusal, after the value's name ("--user-agent: " ...). */
#define SC_PROTOCOL_VALUE_REFUSED "a value may not hold a CR, LF or NUL"

/* Whether the n bytes at s hold no CR, LF or NUL. */
bool sc_protocol_value_ok(const char *s, size_t n);

/* Whether n bytes can go on the request line or a header field as they
 * are: sc_protocol_value_ok, and no other control character either
 * (U+0001-U+001F, DEL), which a URL, a method and a header's name cannot
 * hold.  tab_ok allows HTAB, which a header's value may hold (RFC 9110
 * 5.5). */
bool sc_protocol_request_text_ok(const char *s, size_t n, bool tab_ok);
/* Whether n bytes can be a request header's name (not empty, no ':',
 * space or control character) or its value (no control character but
 * HTAB): what -H and a record's request.headers may send. */
bool sc_protocol_header_name_ok(const char *name, size_t n);
bool sc_protocol_header_value_ok(const char *value, size_t n);

#endif
