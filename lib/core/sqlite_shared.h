/* sqlite_shared: an SQLite file that several processes of a crawl use at
 * once (the robots.txt cache, the origin state).
 *
 * WAL mode lets readers run beside the writer, a busy timeout makes a
 * second writer wait instead of failing, and synchronous=NORMAL gives up
 * durability of the last transactions on a power cut (never consistency)
 * for commits that do not wait on the disk. */
#ifndef SC_SQLITE_SHARED_H
#define SC_SQLITE_SHARED_H

#include <sqlite3.h>
#include <stddef.h>

/* Why SQLite would not take path as a file's name, or NULL when it
 * would.  SQLite as Debian builds it (SQLITE_USE_URI) reads a name that
 * begins with "file:" as a URI ("file:x.db?mode=memory" is no file at
 * all), and ":memory:" or "" is a database in memory; "./" before the
 * name makes it a file's name.  The words follow the option's name:
 * "--seen: 'file:x.db' is a URI to SQLite, not a file name (write
 * ./file:x.db)".  Every SQLite file named by an option is checked with
 * it before it is opened. */
const char *sc_sqlite_name_problem(const char *path, char *why, size_t whylen);

/* Opens (creating) path for shared use with a busy timeout of busy_ms.
 * Returns 0, or -1 with err saying which step failed ("cannot use WAL
 * mode"; lib/README.md's convention), to which the caller adds
 * sqlite3_errmsg(*db), why, when *db is not NULL.  *db is set in both
 * cases; the caller closes it (sqlite3_close accepts NULL). */
int sc_sqlite_open_shared(const char *path, int busy_ms, sqlite3 **db, char *err, size_t errlen);

#endif
