/* json: the JSON strings of CDXJ lines, written as warcio writes them
 * (JavaScript's JSON.stringify), for cdx.c and postkey.c alike. */
#ifndef SC_WARC_JSON_H
#define SC_WARC_JSON_H

#include "core/buf.h"

/* A JSON string of text as JavaScript's JSON.stringify writes it (bytes
 * that are not UTF-8 as U+FFFD), appended to out. */
void sc_warc_json_string(const char *text, struct sc_buf *out);

#endif
