/* postkey: the index key of a request that is not a GET, as warcio's
 * cdx-index (2.4) and pywb give it, so that a POST's capture is found by
 * its body and not mistaken for the GET of the same URL.  The body
 * becomes query parameters appended to the target URI after
 * "__wb_method=METHOD": an application/x-www-form-urlencoded body as it
 * is, a JSON body (application/json, or text/plain that parses as JSON)
 * as its values named by their keys, anything else as
 * "__wb_post_data=" and the bytes in base64; at most 4096 UTF-16 units
 * of it, as warcio keeps.
 *
 * Departure (warcio's JavaScript semantics not reproduced): a
 * multipart/form-data body is given as base64, not by its parts' names
 * (warcio splits it with a regular expression made of the boundary). */
#ifndef SC_WARC_POSTKEY_H
#define SC_WARC_POSTKEY_H

#include <stddef.h>

#include "core/buf.h"

/* Appends to key_url the URL whose SURT is the capture's key (url with
 * "?" or "&", "__wb_method=METHOD&" and the body's parameters), and to
 * body_json the requestBody member's value as a JSON string, or nothing
 * when warcio writes no requestBody (an empty one).  content_type is
 * the request's Content-Type field (NULL when it has none), body the
 * payload's len bytes as recorded. */
void sc_warc_post_key(const char *url, const char *method, const char *content_type,
                      const char *body, size_t len, struct sc_buf *key_url,
                      struct sc_buf *body_json);

#endif
