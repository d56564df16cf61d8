/* sc-render's private header: the browser it drives over the DevTools pipe
 * (browser.c), the tabs that render one page each (tab.c) and the records
 * they make (record.c).  main.c reads the input and runs the loop.
 *
 * Ownership: json_t * follow jansson (a function returning one returns a
 * new reference); char * members are malloced and owned by their struct. */
#ifndef SC_RENDER_H
#define SC_RENDER_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "core/strtab.h"

/* What the command line says. */
struct render_opts {
	int concurrency;      /* -c: tabs in flight */
	int timeout_ms;       /* -m: a page's whole time */
	int command_ms;       /* --command-timeout: one command's deadline */
	int tab_pages;        /* --tab-pages: a tab is closed after K pages */
	int browser_pages;    /* --browser-pages: the browser restarts after M */
	int browser_rss_mb;   /* --browser-rss: or once its process tree is past MB */
	const char *browser;  /* --browser, SC_RENDER_BROWSER, or found */
	const char *wait;     /* --wait, as given */
	const char *args[32]; /* --browser-arg, then SC_RENDER_BROWSER_ARGS' words */
	int nargs;
	bool no_sandbox;        /* --no-sandbox */
	int scroll;             /* --scroll: times to scroll to the end, at most */
	int width, height;      /* --viewport */
	const char *screenshot; /* --screenshot: the folder of the PNGs, or NULL */
	const char *js;         /* --js: the file */
	char *js_expr;          /* its script, wrapped in an async function (malloced) */
	unsigned block_types;   /* --block's resource types (admit.c's table, by bit) */
	char *block_globs[32];  /* --block's URL patterns (malloced) */
	int nglobs;
	bool robots;               /* --robots */
	const char *robots_cache;  /* --robots-cache */
	int delay_ms;              /* --delay: between two requests to one origin */
	bool only_needed;          /* --only-if-needed (or --needed-if) */
	const char *needed_if;     /* --needed-if: a selector whose match needs it */
	const char *warc;          /* --warc: the archive written, or NULL */
	bool warc_cdx;             /* --warc-cdx: its CDXJ beside it */
	const char *from_warc[64]; /* --from-warc: the archives read (argv's) */
	int nfrom;
	int per_host;             /* --per-host: requests in flight to one origin */
	const char *origin_state; /* --origin-state: the crawl's pace file */
	const char *user_agent;   /* -A */
	const char *contact;      /* --contact: in the agent Chromium's is made, or NULL */
	json_t *headers;          /* -H: name -> value (owned), or NULL */
	const char *cookies;      /* --cookies: the crawl's jar file, or NULL */
	bool keep_order;          /* --keep-order */
};

/* The wait condition, parsed. */
enum wait_kind {
	WAIT_LOAD,
	WAIT_DCL,
	WAIT_IDLE,
	WAIT_SELECTOR,
	WAIT_JS,
	WAIT_STABLE
};
struct wait_spec {
	enum wait_kind kind;
	const char *arg; /* the CSS or the expression (borrowed from argv) */
	int stable_ms;
};
int wait_parse(const char *text, struct wait_spec *w, char *err, size_t errlen);

/* A page to render: one input record. */
struct page {
	json_t *in; /* the input record's members that pass through */
	char *url;
	char *body; /* a fetch record's body, to answer the document with; or NULL */
	size_t body_len;
	char *content_type; /* its content type, or NULL */
	long status;        /* its status */
	size_t line;        /* its input line's number */
	size_t order;       /* its record's place in the output (--keep-order) */
	/* Its "request" member (sc-record(5)), put on the document's request
	 * when there is no fetched body: the method (or NULL), the headers
	 * (owned, or NULL) and the body (or NULL). */
	char *method;
	json_t *req_headers;
	char *post;
	size_t post_len;
	char *session;  /* its "session" member, the jar it renders in, or NULL */
	int attempts;   /* tries so far */
	double started; /* sc_now_ms of the first try */
	long long fetched_at;
	struct page *next; /* the queue */
};
void page_free(struct page *p);

/* ---- browser.c: the process and the pipe ---- */
struct browser {
	pid_t pid;    /* 0: none; the browser's own process group */
	int to, from; /* our ends of its fd 3 (commands) and fd 4 (replies) */
	int err;      /* its stderr, drained */
	char *in;     /* what came from fd 4 and is not a whole message yet */
	size_t inlen, incap;
	long next_id;
	char *context; /* the browser context of this run (the run's jar's) */
	char *profile; /* "--user-data-dir=" its profile's folder (owned), or NULL */
	int pages;     /* pages started in it */
};
int browser_start(struct browser *b, const struct render_opts *o, char *err, size_t errlen);
/* Kills the browser's whole process group and reaps it; its profile
 * removed. */
void browser_stop(struct browser *b);
/* Removes the profiles that runs of sc-render killed before their end
 * (SIGKILL) left: the user's, whose run's pid is gone. */
void browser_sweep(void);
/* Sends method(params) on session (NULL: the browser's); returns its id.
 * params is stolen (NULL: {}). */
long browser_send(struct browser *b, const char *session, const char *method, json_t *params);
/* Reads what fd 4 has; calls fn for each message.  -1 at EOF or error. */
int browser_read(struct browser *b, void (*fn)(void *ctx, json_t *msg), void *ctx);
void browser_drain_stderr(struct browser *b);
/* The process group still has processes (for the end). */
bool browser_alive(const struct browser *b);
/* The resident memory of the browser's process tree, in KiB. */
long browser_rss_kib(const struct browser *b);

/* ---- tab.c: one tab, one page at a time ---- */
enum tab_state {
	TAB_FREE,     /* no tab yet */
	TAB_CONTEXT,  /* waiting for its jar's context to be made */
	TAB_CREATING, /* Target.createTarget sent */
	TAB_ATTACHING,
	TAB_IDLE,        /* ready for a page */
	TAB_COOKIES_IN,  /* --cookies: the jar's changes put into the context */
	TAB_LOADING,     /* Page.navigate sent, waiting for the condition */
	TAB_POLLING,     /* a wait's poll sent */
	TAB_SCROLLING,   /* the wait is met: a scroll to the end sent */
	TAB_SCRIPT,      /* --js's script sent */
	TAB_SHOOTING,    /* Page.captureScreenshot sent */
	TAB_READING,     /* the DOM's read sent */
	TAB_COOKIES_OUT, /* --cookies: the context's cookies asked for, the DOM read */
	TAB_CLOSING,
};
struct tab {
	enum tab_state state;
	char *target, *session; /* its target, and the DevTools session on it */
	struct jar *jar;        /* the jar whose context the target is in, or NULL */
	struct page *page;      /* the page on it, or NULL */
	int pages;              /* pages it rendered */
	long pending;           /* the command waited for, or 0 */
	double deadline;        /* that command's deadline */
	double page_deadline;
	double next_poll;
	/* What the page did. */
	int requests, failed, blocked, console_errors, dialogs;
	json_t *request_ids; /* the requests counted, by id (owned; NULL: none yet) */
	long status;
	char *doc_request; /* the main document's request id */
	char *loader;      /* its loader: the document whose events count */
	char *mime;
	int scrolls, scrolled; /* scrolls sent, and those the page grew after */
	bool script_ran;       /* --js's script was sent */
	json_t *js_result;     /* what it returned (owned), or NULL */
	char *js_error;        /* why it failed, or NULL */
	long seq;              /* the number of the page it renders (render's seq) */
	char *refused_doc;     /* why the page's own document was refused, or NULL */
	bool shot;             /* the screenshot was asked for */
	char *shot_path;       /* the PNG written, or NULL */
	bool loaded, dcl, idle, timed_out, answered;
	bool doc_paused; /* this page's main document was paused: later pauses are its own */
	long stable_hash;
	double stable_since;
	char *waited_for;
	struct tab_warc *warc; /* --warc's captures of the page (warc.c), or NULL */
	json_t *missing;       /* --from-warc: the URLs not in the archive (owned), or NULL */
	json_t *dom;           /* the DOM read, while its cookies are saved (owned), or NULL */
};

/* A cookie jar: the cookies of one browser context.  The run's (render's
 * run_jar) is the browser's own context (browser's context), shared with
 * --cookies' file; each record "session" has one of its own, made when
 * its first page comes and kept in memory.  Its cookies, read after each
 * page, go into the context made again when the browser is restarted. */
struct jar {
	struct sc_strtab_link link; /* in render's jars, by name (sessions') */
	char *name;                 /* the session; NULL: the run's jar */
	char *context;              /* a session's browserContextId, or NULL */
	long making;                /* its Target.createBrowserContext's id, or 0 */
	json_t *kept; /* its cookies as last read (Storage.setCookies' shape, owned; not
	               * the run's with --cookies: the file keeps those), or NULL */
	bool refill;  /* its context is new: kept goes in at its next page */
};

struct render;
/* The loop's state, shared by the files. */
struct render {
	struct render_opts opts;
	struct wait_spec wait;
	struct browser b;
	struct tab *tabs;
	struct page *queue, *queue_tail;
	size_t queued, in_flight, failed, written;
	int rss_checked;                /* b.pages when the RSS was last looked at */
	long seq;                       /* pages navigated so far */
	struct admit *admit;            /* --robots' state (admit.c), or NULL */
	struct sc_parser *needs;        /* --only-if-needed's parser (needed.c), or NULL */
	struct render_warc *warc;       /* --warc's writer (warc.c), or NULL */
	struct replay *replay;          /* --from-warc's archives (replay.c), or NULL */
	struct render_cookies *cookies; /* --cookies' jar file (cookies.c), or NULL */
	struct jar run_jar;             /* the run's cookies (cookies.c) */
	/* The browser's User-Agent: -A's, Chromium's with --contact's comment
	 * (owned), or NULL: Chromium's own, untouched. */
	char *agent;
	struct sc_strtab jars;  /* the sessions' jars (owned, cookies.c) */
	size_t jars_making;     /* of them, those whose context is asked for */
	size_t passed;          /* fetch records written as they came (not needed) */
	size_t inputs;          /* input lines that make a record, so far */
	size_t next_out;        /* --keep-order: the order of the next record out */
	struct held_line *held; /* --keep-order: records made before their turn */
	size_t nheld;
	bool draining, input_done, read_error;
};
void tab_start_page(struct render *r, struct tab *t, struct page *p);
void tab_on_message(struct render *r, json_t *msg);
void tab_tick(struct render *r, struct tab *t, double now);
/* The browser went away: every tab's page goes back to the queue (or
 * fails, after its second try). */
void tabs_lost(struct render *r, const char *why);
double tab_next_deadline(const struct render *r);
/* An admitted request goes on: answered with the page's fetched body (its
 * document), or continued. */
void tab_proceed(struct render *r, struct tab *t, const json_t *params);
/* Whether tab_proceed answers it with the page's fetched body. */
bool tab_answers(const struct tab *t, const json_t *params);
/* Whether the page's document request is to carry its record's method,
 * headers or body (it is paused for it). */
bool page_overrides(const struct page *p);

/* ---- needed.c: whether a fetched page needs the browser (--only-if-needed) ---- */
/* Compiles the check; -1 with the usage error in err (--needed-if's). */
int needed_init(struct render *r, char *err, size_t errlen);
void needed_free(struct render *r);
/* Whether the fetch record line[0..len) needs the browser (always true
 * without --only-if-needed, and for a body the parser cannot read). */
bool needed(struct render *r, const char *line, size_t len);

/* ---- admit.c: the browser's requests admitted (--block, --robots, --delay) ---- */
/* Adds --block's LIST to o; -1 with the usage error in err. */
int block_parse(struct render_opts *o, const char *list, char *err, size_t errlen);
/* --robots' state, its cache opened; -1 with the reason in err. */
int admit_init(struct render *r, char *err, size_t errlen);
void admit_free(struct render *r);
/* Whether every request is to be paused (--block, --robots, --delay). */
bool admit_intercepts(const struct render *r);
/* A Fetch.requestPaused of t's: refused, held until its origin's
 * robots.txt is known, or admitted (tab_proceed). */
void admit_paused(struct render *r, struct tab *t, const json_t *params);
/* The loop's share: robots.txt fetcher's descriptor (-1: none), the time
 * it wants to be called by (next if sooner), and its work. */
int admit_fd(const struct render *r);
double admit_next(const struct render *r, double next);
void admit_perform(struct render *r);
/* A request of t's finished (Network.loadingFinished or loadingFailed):
 * its origin's slot is free (--per-host). */
void admit_finished(struct render *r, const struct tab *t, const char *network_id);
/* Network.requestWillBeSent named a request of t's: a slot taken before
 * its id was known is its. */
void admit_named(struct render *r, const struct tab *t, const char *network_id, const char *url);
/* t's page ended: the slots of its requests are free. */
void admit_page_end(struct render *r, const struct tab *t);

/* ---- warc.c: --warc, the page's exchanges archived ---- */
/* Opens the archive (argv: its warcinfo's command line); -1 with why. */
int warc_init(struct render *r, int argc, char **argv, char *err, size_t errlen);
/* Closes it (renamed from .open); -1 with why. */
int warc_close(struct render *r, char *err, size_t errlen);
/* A Fetch.requestPaused at the response stage: its body asked for, then
 * let go; false when it is not one (the request stage: admit.c's). */
bool warc_paused(struct render *r, struct tab *t, const json_t *params);
/* A command's reply that is warc.c's (a body asked for): taken. */
bool warc_reply(struct render *r, long id, const json_t *msg);
/* A Network event of t's: what it says of a capture. */
void warc_event(struct render *r, struct tab *t, const char *method, const json_t *params);
/* The page's screenshot (base64 PNG), for its resource record. */
void warc_shot(struct render *r, struct tab *t, const char *b64);
/* The page ended with dom (or NULL): the captures left written, then the
 * DOM's conversion record and the screenshot's resource record. */
void warc_page_end(struct render *r, struct tab *t, const char *final_url, const char *dom);
/* The tab's captures written as they are, its share freed. */
void warc_tab_free(struct render *r, struct tab *t);

/* ---- replay.c: --from-warc, every request answered from archives ---- */
/* Reads the archives' index; -1 with why. */
int replay_init(struct render *r, char *err, size_t errlen);
void replay_free(struct render *r);
/* A request paused in t: fulfilled from the archive, or failed and its
 * URL added to t->missing. */
void replay_paused(struct render *r, struct tab *t, const json_t *params);

/* ---- cookies.c: the cookie jars; --cookies, the crawl's file, is the run's ---- */
/* Opens the file; -1 with why. */
int cookies_init(struct render *r, char *err, size_t errlen);
/* Frees the file and every jar. */
void cookies_free(struct render *r);
/* A browser started: its contexts hold none of the jars' cookies, and the
 * sessions' contexts are to be made again. */
void cookies_browser_new(struct render *r);
/* The jar of a page's session (NULL: the run's), added when new. */
struct jar *jar_of(struct render *r, const char *session);
/* The jar's browserContextId, or NULL while a session's is not made. */
const char *jar_context(const struct render *r, const struct jar *j);
/* A session's context asked for (once while unanswered): the command's id. */
long jar_make(struct render *r, struct jar *j);
/* A reply that made a jar's context: that jar (its context set, or left
 * NULL when the browser refused), else NULL. */
struct jar *jar_reply(struct render *r, long id, const json_t *msg);
/* Before a page: what the jar holds that its context lacks put into it
 * (the file's changes, for the run's jar with --cookies; all it kept,
 * into a context made again); the command's id, to wait for before
 * navigating, or 0 when none was sent. */
long cookies_before(struct render *r, struct jar *j);
/* After a page's DOM is read: the context's cookies asked for; the
 * command's id, its reply to cookies_got. */
long cookies_after(struct render *r, struct jar *j);
/* Storage.getCookies' result: kept (and, for the run's jar with
 * --cookies, merged into the file, and others' changes into the context). */
void cookies_got(struct render *r, struct jar *j, const json_t *result);

/* ---- output.c: records out, in the input's order with --keep-order ---- */
/* Writes rec (or the encoded line text[0..len)), the input's order-th, now
 * or once those before it are out. */
void out_json(struct render *r, size_t order, const json_t *rec);
void out_raw(struct render *r, size_t order, const char *text, size_t len);
/* The end: whatever is held written. */
void out_end(struct render *r);

/* ---- record.c ---- */
/* Writes p's record: body the DOM (or NULL), err NULL when ok. */
void record_emit(struct render *r, struct page *p, const struct tab *t, const char *final_url,
                 const char *dom, const char *error_kind, const char *error_message);
/* Makes a page of one input line, or writes its bad_input record. */
struct page *page_from_item(json_t *rec, const char *url, size_t ulen, size_t line, size_t order);
/* Writes a page's screenshot (base64 PNG) under --screenshot's folder;
 * returns its path (malloced).  Dies if it cannot be written. */
char *shot_write(const struct render *r, const struct page *p, const char *b64);

#endif
