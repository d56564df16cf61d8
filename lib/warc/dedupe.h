/* dedupe: the payload digests already archived, for revisit records
 * (WARC/1.1 section 6.7; --warc-dedupe of sc-fetch, issue 20).
 *
 * An SQLite file (core/sqlite_shared: several processes of a crawl use it
 * at once, and the next crawl after them) that maps a payload digest to
 * the record that holds the payload: its WARC-Record-ID, WARC-Target-URI
 * and WARC-Date, so that a payload met again, under any URL, in any crawl,
 * is written as a revisit that refers to it; and a target URI to its
 * latest such record, for a 304's revisit. */
#ifndef SC_WARC_DEDUPE_H
#define SC_WARC_DEDUPE_H

#include <stdbool.h>

#include "warc/digest.h"
#include "warc/record.h"

struct sc_warc_dedupe;

/* The original a revisit refers to (copies; the URI cut at 2 KiB, where
 * it is not kept). */
struct sc_warc_original {
	char id[SC_WARC_ID_LEN];
	char date[SC_WARC_DATE_LEN];
	char uri[2048];
};

/* Opens (creating) the index at path.  Returns it, or NULL with the
 * reason in err.  Free with close. */
struct sc_warc_dedupe *sc_warc_dedupe_open(const char *path, char *err, size_t errlen);
void sc_warc_dedupe_close(struct sc_warc_dedupe *d);

/* The record that holds a payload of that digest ("sha1:..."): true and
 * *out, or false when there is none (or the file cannot be read: a
 * lookup that fails writes the payload again, which loses nothing). */
bool sc_warc_dedupe_find(struct sc_warc_dedupe *d, const char *digest,
                         struct sc_warc_original *out);
/* The latest record of a URI that holds a payload, likewise. */
bool sc_warc_dedupe_find_uri(struct sc_warc_dedupe *d, const char *uri,
                             struct sc_warc_original *out);

/* A response record written with its payload: the index learns it (a
 * digest known already keeps its first record).  Returns 0, or -1 with the
 * reason in err. */
int sc_warc_dedupe_add(struct sc_warc_dedupe *d, const char *digest, const char *id,
                       const char *uri, const char *date, char *err, size_t errlen);

/* The index forgets the payloads held by the records of those n
 * WARC-Record-IDs ("<urn:uuid:...>"): before their archive is removed, so
 * that no later revisit refers to a record that is gone (sc-warc forget,
 * which crawl.mk runs on a chunk's archives before it fetches the chunk
 * again).  One transaction, one pass over the table.  Returns how many
 * were forgotten, or -1 with the reason in err. */
long sc_warc_dedupe_forget(struct sc_warc_dedupe *d, const char *const *ids, size_t n, char *err,
                           size_t errlen);

#endif
