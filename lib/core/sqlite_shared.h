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

/* Opens (creating) path for shared use with a busy timeout of busy_ms.
 * Returns 0, or -1 with *what saying which step failed (a static string;
 * sqlite3_errmsg(*db) says why when *db is not NULL).  *db is set in both
 * cases; the caller closes it (sqlite3_close accepts NULL). */
int sc_sqlite_open_shared(const char *path, int busy_ms, sqlite3 **db, const char **what);

#endif
