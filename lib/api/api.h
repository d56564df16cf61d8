/* api: what the files of lib/api share (not installed: programs and
 * users include sc.h).  A result is made by fetcher.c for each record
 * and read by result.c's accessors. */
#ifndef SC_API_H
#define SC_API_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "sc.h"

/* A finished record: its line (borrowed from the engine during the done
 * callback) and what the accessors read from it, made on first use. */
struct sc_result {
	const char *line;
	size_t len;
	void *user;
	json_t *rec; /* the line parsed, or NULL until an accessor needs it */
	char *body;  /* body_base64 decoded, or NULL (owned) */
	size_t body_len;
	bool body_decoded; /* body and body_len are set */
};

/* A result for line (borrowed) and user; cleared after the callback. */
void sc_result_init(struct sc_result *r, const char *line, size_t len, void *user);
void sc_result_clear(struct sc_result *r);

/* An error text for errmsg (malloced; the caller frees it with sc_free). */
char *sc_api_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
