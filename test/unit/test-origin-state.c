/* Unit tests for lib/web/origin_state: claims spaced by the gap, the pace
 * saved and read back, a block holding claims, a file that is not one, a
 * file written before the background column, a handle whose caller
 * spaces its own starts waiting only on the others', and several processes
 * claiming one origin at once without ever two starts within its spacing;
 * the file shown as lines (sc-fetch --show), byte for byte. */
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/util.h"
#include "tap.h"
#include "web/origin_state.h"

static char dir[] = "/tmp/sc-origin-state-XXXXXX";

static char *path_in_dir(const char *name)
{
	size_t n = strlen(dir) + strlen(name) + 2;
	char *p = malloc(n);
	if (!p || snprintf(p, n, "%s/%s", dir, name) < 0)
		abort();
	return p;
}

static void test_claims(void)
{
	char *path = path_in_dir("a.db"), err[512] = "";
	struct sc_origin_state *s = sc_origin_state_open(path, err, sizeof err);
	int64_t nb = -1;

	ok(s != NULL, "opens a new file");
	is_int(sc_origin_state_claim(s, "http://a:80", 1000, 1000, &nb, err, sizeof err), 1,
	       "first claim starts");
	is_int(sc_origin_state_claim(s, "http://a:80", 1500, 1000, &nb, err, sizeof err), 0,
	       "a claim within the gap waits");
	is_int(nb, 2000, "until the gap is over");
	is_int(sc_origin_state_claim(s, "http://b:80", 1500, 1000, &nb, err, sizeof err), 1,
	       "another origin is its own");
	is_int(sc_origin_state_claim(s, "http://a:80", 2000, 250, &nb, err, sizeof err), 1,
	       "then it starts");
	is_int(sc_origin_state_claim(s, "http://a:80", 2100, 250, &nb, err, sizeof err), 0,
	       "the new gap governs");
	is_int(nb, 2250, "the new gap's end");
	is_int(sc_origin_state_sent(s, "http://a:80", 2040, err, sizeof err), 0,
	       "the request went out later");
	is_int(sc_origin_state_claim(s, "http://a:80", 2250, 250, &nb, err, sizeof err), 0,
	       "the gap counts from the request sent, not the claim");
	is_int(nb, 2290, "from when it went out");
	is_int(sc_origin_state_sent(s, "http://a:80", 1990, err, sizeof err), 0,
	       "an earlier time is no error");
	is_int(sc_origin_state_claim(s, "http://a:80", 2289, 250, &nb, err, sizeof err), 0,
	       "and moves nothing back");
	is_int(nb, 2290, "the latest time holds");
	is_int(sc_origin_state_sent(s, "http://d:80", 5000, err, sizeof err), 0,
	       "an origin never claimed: nothing to move");
	is_int(sc_origin_state_claim(s, "http://d:80", 1, 1000, &nb, err, sizeof err), 1,
	       "and it starts");

	struct sc_origin_pace pace = { .limit = 3,
		                       .interval_ms = 125.5,
		                       .ceiling_ms = 100,
		                       .latency_floor_ms = 4.25,
		                       .block_level = 2,
		                       .blocked_until = 900000,
		                       .background = 0.25 };
	strcpy(pace.reason, "429");
	is_int(sc_origin_state_put(s, "http://a:80", &pace, err, sizeof err), 0, "saves a pace");
	sc_origin_state_close(s);

	s = sc_origin_state_open(path, err, sizeof err);
	struct sc_origin_pace got = { 0 };
	bool found = false;
	is_int(sc_origin_state_get(s, "http://a:80", &nb, &got, &found, err, sizeof err), 0,
	       "reads it back");
	ok(found && got.limit == 3 && got.interval_ms == 125.5 && got.ceiling_ms == 100 &&
	           got.latency_floor_ms == 4.25 && got.block_level == 2 &&
	           got.blocked_until == 900000 && got.background == 0.25,
	   "every member survives a close");
	is_str(got.reason, "429", "and the reason");
	is_int(nb, 2040, "the last start (the request sent) is kept beside it");
	is_int(sc_origin_state_claim(s, "http://a:80", 5000, 0, &nb, err, sizeof err), 0,
	       "a block holds claims");
	is_int(nb, 900000, "until it ends");
	is_int(sc_origin_state_get(s, "http://c:80", &nb, &got, &found, err, sizeof err), 0,
	       "an unknown origin");
	ok(!found && nb == 0, "is not found and holds nothing");
	sc_origin_state_close(s);
	free(path);
}

/* sc_origin_state_own_spacing: the caller's own last start (claimed or
 * sent) does not hold it; another handle's does, and a block does. */
static void test_own_spacing(void)
{
	char *path = path_in_dir("own.db"), err[512] = "";
	struct sc_origin_state *s = sc_origin_state_open(path, err, sizeof err);
	struct sc_origin_state *t = sc_origin_state_open(path, err, sizeof err);
	int64_t nb = -1;

	ok(s && t, "two handles on one file");
	is_int(sc_origin_state_claim(s, "http://a:80", 1000, 1000, &nb, err, sizeof err), 1,
	       "the first claims");
	is_int(sc_origin_state_claim(s, "http://a:80", 1500, 1000, &nb, err, sizeof err), 0,
	       "off (as opened), its own claim holds it");
	sc_origin_state_own_spacing(s, true);
	is_int(sc_origin_state_claim(s, "http://a:80", 1500, 1000, &nb, err, sizeof err), 1,
	       "on, its own claim does not");
	is_int(sc_origin_state_claim(t, "http://a:80", 2000, 1000, &nb, err, sizeof err), 0,
	       "another handle's claim holds it");
	is_int(nb, 2500, "from that handle's start");
	sc_origin_state_own_spacing(t, true);
	is_int(sc_origin_state_claim(t, "http://a:80", 2000, 1000, &nb, err, sizeof err), 0,
	       "also when it spaces its own");
	is_int(sc_origin_state_sent(s, "http://a:80", 1600, err, sizeof err), 0,
	       "the first's request went out");
	is_int(sc_origin_state_claim(s, "http://a:80", 1700, 1000, &nb, err, sizeof err), 1,
	       "its own sent start does not hold it");
	is_int(sc_origin_state_claim(t, "http://a:80", 2500, 1000, &nb, err, sizeof err), 0,
	       "the other waits on it");
	is_int(nb, 2700, "from the last claim");
	is_int(sc_origin_state_claim(t, "http://a:80", 2700, 1000, &nb, err, sizeof err), 1,
	       "then starts");
	is_int(sc_origin_state_claim(s, "http://a:80", 3000, 1000, &nb, err, sizeof err), 0,
	       "and the first waits on the second's");
	is_int(nb, 3700, "its spacing");
	struct sc_origin_pace pace = { .limit = 1, .blocked_until = 9000, .background = -1 };
	is_int(sc_origin_state_put(t, "http://a:80", &pace, err, sizeof err), 0, "a block saved");
	is_int(sc_origin_state_claim(t, "http://a:80", 5000, 1000, &nb, err, sizeof err), 0,
	       "holds its own handle all the same");
	is_int(nb, 9000, "until it ends");
	sc_origin_state_close(s);
	sc_origin_state_close(t);
	free(path);
}

static void test_not_a_file(void)
{
	char *path = path_in_dir("junk"), err[512] = "";
	FILE *f = fopen(path, "w");
	if (!f ||
	    fputs("this is not an SQLite database, it is a text file of some length\n", f) < 0 ||
	    fclose(f) != 0)
		abort();
	ok(sc_origin_state_open(path, err, sizeof err) == NULL, "a text file is refused");
	ok(strstr(err, "origin state: ") && strstr(err, path), "naming the file (%s)", err);
	free(path);
}

/* A file as sc-fetch wrote it before the background was kept: it opens,
 * its rows read with no background, and the next save keeps one. */
static void test_old_file(void)
{
	char *path = path_in_dir("old.db"), err[512] = "";
	sqlite3 *db;
	if (sqlite3_open(path, &db) != SQLITE_OK ||
	    sqlite3_exec(db,
	                 "CREATE TABLE origins (origin TEXT PRIMARY KEY,"
	                 " last_start INTEGER NOT NULL DEFAULT 0,"
	                 " has_pace INTEGER NOT NULL DEFAULT 0,"
	                 " lim INTEGER, interval_ms REAL, ceiling_ms REAL,"
	                 " latency_floor_ms REAL, block_level INTEGER,"
	                 " blocked_until INTEGER, reason TEXT);"
	                 "INSERT INTO origins VALUES ('http://o:80', 700, 1, 2, 500, 250, 3,"
	                 " 0, 0, '503')",
	                 NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_close(db) != SQLITE_OK)
		abort();
	struct sc_origin_state *s = sc_origin_state_open(path, err, sizeof err);
	ok(s != NULL, "a file without the background column opens (%s)", err);
	struct sc_origin_pace got = { .background = 0.5 };
	int64_t last = 0;
	bool found = false;
	is_int(sc_origin_state_get(s, "http://o:80", &last, &got, &found, err, sizeof err), 0,
	       "its row reads");
	ok(found && last == 700 && got.limit == 2 && got.interval_ms == 500, "as it was written");
	ok(got.background < 0, "with no background measured (%g)", got.background);
	got.background = 0.3;
	is_int(sc_origin_state_put(s, "http://o:80", &got, err, sizeof err), 0,
	       "a background saves");
	sc_origin_state_close(s);
	s = sc_origin_state_open(path, err, sizeof err);
	is_int(sc_origin_state_get(s, "http://o:80", &last, &got, &found, err, sizeof err), 0,
	       "and reads");
	ok(got.background == 0.3, "back (%g)", got.background);
	sc_origin_state_close(s);
	free(path);
}

static int64_t wall_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int cmp64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* Four processes, twelve starts each, one origin with a 15 ms gap. */
static void test_processes(void)
{
	enum {
		PROCS = 4,
		STARTS = 12,
		GAP = 15
	};
	char *path = path_in_dir("shared.db");
	int fds[2];
	if (pipe(fds) != 0)
		abort();
	for (int p = 0; p < PROCS; p++) {
		if (fork() != 0)
			continue;
		close(fds[0]);
		char err[512] = "";
		struct sc_origin_state *s = sc_origin_state_open(path, err, sizeof err);
		free(path); /* the child's copy: it leaves by _exit */
		for (int i = 0; s && i < STARTS;) {
			int64_t now = wall_ms(), nb;
			int rc = sc_origin_state_claim(s, "http://shared:80", now, GAP, &nb, err,
			                               sizeof err);
			if (rc < 0)
				_exit(2);
			if (rc == 1) {
				if (write(fds[1], &now, sizeof now) != sizeof now)
					_exit(3);
				i++;
			} else {
				usleep(1000);
			}
		}
		sc_origin_state_close(s);
		_exit(s ? 0 : 1);
	}
	close(fds[1]);
	int64_t starts[PROCS * STARTS];
	size_t n = 0;
	while (n < PROCS * STARTS && read(fds[0], &starts[n], sizeof starts[n]) == sizeof starts[n])
		n++;
	close(fds[0]);
	int failed = 0;
	for (int p = 0; p < PROCS; p++) {
		int st;
		wait(&st);
		failed += !WIFEXITED(st) || WEXITSTATUS(st) != 0;
	}
	is_int(failed, 0, "every process ran its claims");
	is_int(n, PROCS * STARTS, "every start was claimed");
	qsort(starts, n, sizeof starts[0], cmp64);
	int64_t min_gap = INT64_MAX;
	for (size_t i = 1; i < n; i++)
		if (starts[i] - starts[i - 1] < min_gap)
			min_gap = starts[i] - starts[i - 1];
	ok(min_gap >= GAP, "no two starts of four processes within the gap (closest %lld ms)",
	   (long long)min_gap);
	free(path);
}

/* sc_origin_state_show's lines, gathered. */
struct shown {
	char text[1024];
	int lines, stop_at;
};

static int gather(const char *line, size_t len, void *ctx)
{
	struct shown *sh = ctx;
	size_t used = strlen(sh->text);

	snprintf(sh->text + used, sizeof(sh->text) - used, "%.*s\n", (int)len, line);
	return ++sh->lines == sh->stop_at ? 7 : 0;
}

/* The lines sc-fetch --show prints: every member in its order, null for
 * a pace not saved; the walk ends at the callback's first nonzero. */
static void test_show(void)
{
	char *path = path_in_dir("show.db"), err[512] = "", why[128] = "";
	struct sc_origin_state *s = sc_origin_state_open(path, err, sizeof err);
	struct sc_origin_pace pace = { .limit = 2,
		                       .interval_ms = 766.66,
		                       .ceiling_ms = 1534,
		                       .block_level = 1,
		                       .blocked_until = 1800000000000,
		                       .reason = "429",
		                       .background = 0.25 };
	struct shown sh = { "", 0, 0 };
	int64_t nb;

	ok(s != NULL, "opens show.db");
	sc_origin_state_claim(s, "https://b:443", 1000, 0, &nb, err, sizeof err);
	sc_origin_state_put(s, "http://a:80", &pace, err, sizeof err);
	is_int(sc_origin_state_show(s, gather, &sh, why, sizeof why), 0, "shows the file");
	is_str(sh.text,
	       "{\"origin\":\"http://a:80\",\"last_start\":0,\"limit\":2,\"interval_ms\":766.7,"
	       "\"ceiling_ms\":1534.0,\"latency_floor_ms\":0.0,\"block_level\":1,"
	       "\"blocked_until\":1800000000000,\"reason\":\"429\",\"background\":0.25}\n"
	       "{\"origin\":\"https://b:443\",\"last_start\":1000,\"limit\":null,"
	       "\"interval_ms\":null,\"ceiling_ms\":null,\"latency_floor_ms\":null,"
	       "\"block_level\":null,\"blocked_until\":null,\"reason\":null,\"background\":null}\n",
	       "one line per origin, in order, every member");
	sh = (struct shown){ "", 0, 1 };
	is_int(sc_origin_state_show(s, gather, &sh, why, sizeof why), 7,
	       "the callback's nonzero ends the walk and is returned");
	is_int(sh.lines, 1, "after one line");
	is_str(why, "", "no error text");
	sc_origin_state_close(s);
	free(path);
}

int main(void)
{
	if (!mkdtemp(dir))
		return 1;
	test_claims();
	test_own_spacing();
	test_not_a_file();
	test_old_file();
	test_processes();
	test_show();
	const char *files[] = { "show.db",       "show.db-wal", "show.db-shm", "a.db",
		                "a.db-wal",      "a.db-shm",    "junk",        "old.db",
		                "old.db-wal",    "old.db-shm",  "shared.db",   "shared.db-wal",
		                "shared.db-shm", "own.db",      "own.db-wal",  "own.db-shm" };
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char *p = path_in_dir(files[i]);
		(void)unlink(p);
		free(p);
	}
	(void)rmdir(dir);
	return tap_done();
}
