/* fetch: the loop.  Owns the engine's life (new, free), fetch_run: the
 * epoll set that holds curl's sockets, the eventfd that signals wake and
 * the input while more work is wanted (struct fetch_loop); reading input
 * lines on demand (struct fetch_input); starting what admission lets start
 * (admit); the end of each attempt (retry or finish); and the drain after
 * a signal; and the same loop turned by a library caller, a step at a time,
 * with items pulled from it instead of read (fetch_start, fetch_step).
 * It is the one file that calls all the others: they hand
 * their results back here rather than call each other round. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/signals.h"
#include "engine/fetch_engine.h"
#include "kit/cli.h"
#include "record/input.h"
#include "web/pace.h"

/* Lines read beyond the work that can start now: enough that a finished
 * transfer is replaced at once, small enough to stay flat in memory. */
#define READAHEAD_BASE(c) ((size_t)(c) / 4 + 4)
/* When free slots cannot be filled because every queued URL waits on its
 * host's cap, reading goes on (so other hosts' URLs are not stuck behind
 * them), up to this many queued jobs. */
#define READAHEAD_MAX(c) ((size_t)(c)*4 + 10000)

void fetch_wake(struct fetch_engine *e)
{
	int saved = errno;
	uint64_t one = 1;

	if (e && e->loop.wakefd >= 0) {
		ssize_t n = write(e->loop.wakefd, &one, sizeof(one));
		(void)n; /* full (a wake-up is pending already) is as good */
	}
	errno = saved;
}

/* One attempt ended (xfer is NULL for a job cancelled while it waited). */
static void attempt_ended(struct fetch_engine *e, struct job *job, struct transfer *xfer,
                          struct outcome *oc)
{
	double now = sc_now_ms();
	struct sc_retry_decision d = { .verdict = SC_RETRY_DONE };

	struct sc_pace_event ev;
	/* A robots.txt that times out is unreachable for this run at once
	 * (RFC 9309, 2.3.1.4): asked again, it would hold its origin's queue,
	 * and the round, for the whole timeout each time. */
	bool robots_timeout = job->robots_for && oc->kind == SC_ERR_TIMEOUT;

	fetch_count_attempt(e, job, oc);
	fetch_history_add(job, xfer, oc);
	char err[256];
	if (!fetch_warc_attempt(e, job, xfer, oc, err, sizeof(err)) && !e->input.error) {
		/* The archive cannot be written: the run stops, as for input it
		 * cannot read. */
		snprintf(e->loop.error, sizeof(e->loop.error), "%s", err);
		e->input.error = true;
	}
	if (fetch_pace_answered(e, job, xfer, oc, now, &ev))
		fetch_metrics_throttle(e, job->origin, &ev, now);
	if (oc->kind != SC_ERR_CANCELLED && !e->loop.stopping && !robots_timeout)
		d = sc_retry_decide(e->loop.retry, job->attempts, job->max_attempts, oc->status,
		                    oc->kind, xfer ? xfer->retry_after : NULL, now, sc_wall_ms());
	if (job->robots_for && d.verdict != SC_RETRY_AGAIN)
		fetch_robots_learn(e, job, xfer, oc, fetch_warc_last_file(e));
	fetch_request_metrics(e, job, xfer, oc, sc_retry_verdict_name(d.verdict));
	if (d.verdict == SC_RETRY_AGAIN) {
		job->wait_ms = d.delay_ms;
		job->ready_at = now + (double)d.delay_ms;
		if (d.pause_origin)
			fetch_origin_pause(job->origin, job->ready_at);
		fetch_heap_push(&e->origins, job);
		return;
	}
	if (job->robots_for) {
		fetch_robots_job_end(e, job);
		return;
	}
	fetch_job_complete(e, job, xfer, oc, now);
	if (d.verdict == SC_RETRY_RATE_LIMITED) {
		char msg[160];
		snprintf(msg, sizeof(msg),
		         "Retry-After of %lld s is beyond --retry-max-wait (%ld s)",
		         (d.delay_ms + 999) / 1000, e->opts->retry.max_wait_ms / 1000);
		sc_record_set_error(job->rec, SC_ERR_RATE_LIMITED, msg);
		job->failed = true;
	}
	fetch_job_done(e, job);
}

/* A job that never started its next attempt (queued, or waiting to retry)
 * ends as cancelled; an earlier attempt's outcome stays in its history. */
static void cancel_waiting(struct fetch_engine *e, struct job *job)
{
	double now = sc_now_ms();

	if (job->robots_for) {
		fetch_robots_job_end(e, job);
		return;
	}
	if (job->attempts == 0)
		job->first_start = now;
	fetch_job_complete(e, job, NULL, &(struct outcome){ .kind = SC_ERR_CANCELLED }, now);
	sc_record_set_error(job->rec, SC_ERR_CANCELLED, "cancelled by shutdown before it started");
	job->failed = true;
	fetch_job_done(e, job);
}

static void start_stopping(struct fetch_engine *e)
{
	e->loop.stopping = true;
	e->loop.grace_deadline = sc_now_ms() + e->opts->grace_s * 1000.0;
	/* Nothing new starts: queued and waiting jobs end now, as cancelled. */
	while (e->origins.ring) {
		struct origin *origin = e->origins.ring;
		while (origin->queued > 0)
			cancel_waiting(e, fetch_origin_pop(&e->origins, origin));
		fetch_ring_remove(&e->origins, origin);
	}
	while (e->origins.nheap > 0)
		cancel_waiting(e, fetch_heap_pop(&e->origins));
	/* Jobs queued on origins that were not in the ring (at their cap). */
	for (struct sc_strtab_link *l = e->origins.table.head; l; l = l->next) {
		struct origin *origin = SC_STRTAB_ENTRY(l, struct origin, link);
		while (origin->queued > 0)
			cancel_waiting(e, fetch_origin_pop(&e->origins, origin));
	}
}

/* The attempt curl ended (or refused to start) is dealt with; then its
 * transfer is free for the next. */
static void transfer_done(struct fetch_engine *e, struct transfer *xfer, CURLcode rc)
{
	struct outcome oc = { 0 };
	struct job *job = fetch_transfer_end(e, xfer, rc, &oc);

	attempt_ended(e, job, xfer, &oc);
	fetch_transfer_release(e, xfer);
}

/* After --grace, transfers still in flight end as cancelled. */
static void abort_inflight(struct fetch_engine *e)
{
	while (e->xfers.active) {
		struct transfer *xfer = e->xfers.active;
		struct outcome oc = { 0 };
		struct job *job = fetch_transfer_cancel(e, xfer, &oc);
		attempt_ended(e, job, xfer, &oc);
		fetch_transfer_release(e, xfer);
	}
}

static void fail_unstarted(struct fetch_engine *e, struct job *job, int kind, const char *why);

static void start_job(struct fetch_engine *e, struct job *job, double now)
{
	struct transfer *refused;

	/* --login-url: its session lost, for a login first (fetch_cookies). */
	if (fetch_cookies_held(e, job)) {
		fail_unstarted(e, job, SC_ERR_SESSION_LOST,
		               "an answer before it was the login page (--login-url): the session "
		               "was lost");
		return;
	}

	/* Held by its origin's pace or another process's start: back at the
	 * head of its queue, which waits until then. */
	if (!fetch_pace_claim(e, job, now)) {
		fetch_origin_push(&e->origins, job->origin, job, true);
		return;
	}
	if (job->attempts == job->prior)
		sc_retry_note_first_attempt(e->loop.retry, now);
	if (!fetch_transfer_start(e, job, now, &refused))
		transfer_done(e, refused, CURLE_FAILED_INIT);
}

/* A job that an origin's long block ends before it starts (fetch_pace):
 * failed, for a later run to fetch again; a robots.txt request is an
 * unreachable robots.txt. */
static void fail_unstarted(struct fetch_engine *e, struct job *job, int kind, const char *why)
{
	double now = sc_now_ms();
	struct outcome oc = { .kind = kind };

	if (job->robots_for) {
		fetch_robots_learn(e, job, NULL, &oc, NULL);
		fetch_robots_job_end(e, job);
		return;
	}
	if (job->attempts == 0)
		job->first_start = now;
	fetch_job_complete(e, job, NULL, &oc, now);
	char message[320];
	snprintf(message, sizeof(message), "%s: %s",
	         job->attempts > 0 ? "not retried" : "not requested", why);
	sc_record_set_error(job->rec, kind, message);
	job->failed = true;
	fetch_job_done(e, job);
}

/* --defer-after: all that is left of the run waits past the bound, on
 * origins held (a Crawl-delay, a Retry-After, the pace) or on retries due
 * later (the backoff, the retry budget): those URLs end, not requested
 * (or not retried), as "deferred" records, for a later run (crawl.mk's
 * next round, which fetches them anew).  Only once the run has lasted
 * the bound too, so that runs one after another on a held origin each
 * wait that long, never spin.  An origin whose robots.txt request waits
 * keeps its queue, and a robots.txt retry stays: its answer decides what
 * the URLs are. */
static void defer_held(struct fetch_engine *e, double held_ms)
{
	char why[160];

	snprintf(why, sizeof(why),
	         "deferred: all that was left waits %.0f s or more (--defer-after %ld ms)",
	         ceil(held_ms / 1000.0), e->opts->defer_after_ms);
	/* The ring changes as origins empty: searched again each time. */
	for (;;) {
		struct origin *start = e->origins.ring, *origin = start, *found = NULL;
		if (!start)
			break;
		do {
			if (origin->qhead && !origin->qhead->robots_for)
				found = origin;
			origin = origin->rnext;
		} while (!found && origin != start);
		if (!found)
			break;
		while (found->queued > 0)
			fail_unstarted(e, fetch_origin_pop(&e->origins, found), SC_ERR_DEFERRED,
			               why);
		fetch_ring_update(&e->origins, found);
	}
	/* The retries waiting, but robots.txt's, which go back. */
	size_t n = e->origins.nheap, kept = 0;
	struct job **robots = sc_calloc(n ? n : 1, sizeof(*robots));
	while (e->origins.nheap > 0) {
		struct job *job = fetch_heap_pop(&e->origins);
		if (job->robots_for)
			robots[kept++] = job;
		else
			fail_unstarted(e, job, SC_ERR_DEFERRED, why);
	}
	for (size_t i = 0; i < kept; i++)
		fetch_heap_push(&e->origins, robots[i]);
	free(robots);
}

/* --defer-after's rule: all that is left waits past the bound (origins
 * held, retries due later), the run has lasted it, and no other process
 * of the crawl (--origin-state) is busy; what is left is then deferred
 * (defer_held). */
static void defer_if_held(struct fetch_engine *e, double now, double wake, bool input_done)
{
	double bound = (double)e->opts->defer_after_ms;
	double next = wake;
	if (e->origins.nheap > 0)
		next = fmin(next, e->origins.heap[0]->ready_at);
	bool idle = input_done && e->xfers.inflight == 0;
	bool left = e->origins.queued > 0 || e->origins.nheap > 0;
	bool held = idle && left && next > now + bound;
	if (fetch_pace_others_busy(e, !held && !(idle && !left), now))
		return;
	if (held && now >= e->loop.started_at + bound)
		defer_held(e, next - now);
}

/* Starts what may start now.  Returns the time of the next possible start
 * (ms) if something waits on a clock, else INFINITY; *host_blocked is set
 * when free slots stay empty because no queued origin may start. */
static double admit(struct fetch_engine *e, double now, bool *host_blocked)
{
	double wake = INFINITY;
	struct job *job;
	struct origin *blocked;
	char why[256];
	int kind;

	*host_blocked = false;
	while ((blocked = fetch_pace_blocked_origin(e, now, &kind, why, sizeof(why)))) {
		while (blocked->queued > 0)
			fail_unstarted(e, fetch_origin_pop(&e->origins, blocked), kind, why);
		fetch_ring_update(&e->origins, blocked);
	}
	while (e->xfers.inflight < e->opts->concurrency && e->origins.ring) {
		if (!fetch_origins_rate_allows(&e->origins, now, &wake))
			return wake;
		if (!(job = fetch_origins_next(&e->origins, now, &wake)))
			break;
		start_job(e, job, now);
	}
	if (e->xfers.inflight < e->opts->concurrency)
		*host_blocked = true;
	return wake;
}

/* curl's socket callback: mirrors what curl wants of a socket into epfd.
 * socketp is NULL until the socket is in the set (curl_multi_assign). */
static int on_socket(CURL *easy, curl_socket_t s, int what, void *userp, void *socketp)
{
	struct fetch_engine *e = userp;
	struct epoll_event ev = { .data.fd = s };

	(void)easy;
	if (what == CURL_POLL_REMOVE) {
		if (socketp) {
			epoll_ctl(e->loop.epfd, EPOLL_CTL_DEL, s,
			          NULL); /* gone already if closed */
			curl_multi_assign(e->loop.multi, s, NULL);
		}
		return 0;
	}
	ev.events = (what & CURL_POLL_IN ? EPOLLIN : 0) | (what & CURL_POLL_OUT ? EPOLLOUT : 0);
	int op = socketp ? EPOLL_CTL_MOD : EPOLL_CTL_ADD;
	if (epoll_ctl(e->loop.epfd, op, s, &ev) != 0) {
		/* A descriptor number curl closed and reused, or one closed
		 * under us: the other operation fits. */
		op = op == EPOLL_CTL_ADD ? EPOLL_CTL_MOD : EPOLL_CTL_ADD;
		if (epoll_ctl(e->loop.epfd, op, s, &ev) != 0)
			return -1;
	}
	if (!socketp)
		curl_multi_assign(e->loop.multi, s, e);
	return 0;
}

/* curl's timer callback: the loop calls curl back when the time comes. */
static int on_timer(CURLM *multi, long timeout_ms, void *userp)
{
	struct fetch_engine *e = userp;

	(void)multi;
	/* 0 is "at once": due whatever clock reading the loop compares it to. */
	e->loop.curl_timer_at = timeout_ms < 0    ? INFINITY
	                        : timeout_ms == 0 ? 0
	                                          : sc_now_ms() + (double)timeout_ms;
	return 0;
}

/* Adds or removes the input descriptor, so that epoll wakes for input only
 * while the engine wants more.  A regular file cannot be polled, and needs
 * not be: its reads never wait. */
static void poll_input(struct fetch_engine *e, int fd, bool want)
{
	if (want == e->input.polled)
		return;
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };
	if (epoll_ctl(e->loop.epfd, want ? EPOLL_CTL_ADD : EPOLL_CTL_DEL, fd, &ev) == 0 || !want)
		e->input.polled = want;
}

struct fetch_engine *fetch_engine_new(const struct fetch_options *opts,
                                      const struct fetch_streams *streams, char *err, size_t errlen)
{
	struct fetch_engine *e;

	if (!fetch_global_hold()) {
		snprintf(err, errlen, "cannot initialise libcurl");
		return NULL;
	}
	e = sc_calloc(1, sizeof(*e));
	e->opts = opts;
	e->loop.epfd = -1;
	e->loop.wakefd = -1;
	fetch_origins_init(&e->origins, opts);
	fetch_submit_init(e);
	fetch_output_init(e, streams->out);
	if (!fetch_metrics_init(e, streams, err, errlen))
		goto fail;
	e->loop.multi = curl_multi_init();
	e->loop.epfd = epoll_create1(EPOLL_CLOEXEC);
	if (e->loop.epfd < 0) {
		snprintf(err, errlen, "epoll_create1: %s", strerror(errno));
		goto fail;
	}
	e->loop.curl_timer_at = INFINITY;
	struct sc_retry_policy policy = opts->retry;
	policy.paced = opts->adaptive;
	e->loop.retry = sc_retry_state_new(&policy);
	if (!e->loop.multi || !e->loop.retry)
		sc_die(SC_EXIT_FAILURE, "out of memory");
	/* The cap holds for sockets too, and the keep-alive pool matches it. */
	curl_multi_setopt(e->loop.multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, opts->concurrency);
	if (opts->per_host > 0)
		curl_multi_setopt(e->loop.multi, CURLMOPT_MAX_HOST_CONNECTIONS, opts->per_host);
	curl_multi_setopt(e->loop.multi, CURLMOPT_MAXCONNECTS, opts->concurrency);
	curl_multi_setopt(e->loop.multi, CURLMOPT_PIPELINING, (long)CURLPIPE_MULTIPLEX);
	/* Event-driven: curl says which sockets to watch and when to call it;
	 * one epoll_wait then costs the ready sockets, not all of them. */
	curl_multi_setopt(e->loop.multi, CURLMOPT_SOCKETFUNCTION, on_socket);
	curl_multi_setopt(e->loop.multi, CURLMOPT_SOCKETDATA, e);
	curl_multi_setopt(e->loop.multi, CURLMOPT_TIMERFUNCTION, on_timer);
	curl_multi_setopt(e->loop.multi, CURLMOPT_TIMERDATA, e);
	if (!fetch_robots_init(e, err, errlen) || !fetch_pace_init(e, err, errlen) ||
	    !fetch_warc_init(e, err, errlen) || !fetch_cookies_init(e, err, errlen) ||
	    !fetch_proxy_init(e, err, errlen))
		goto fail;
	/* The engine's own wake-up (a signal, a drain): each engine has one,
	 * so that one fetcher's drain wakes its own loop and no other. */
	e->loop.wakefd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (e->loop.wakefd < 0) {
		snprintf(err, errlen, "eventfd: %s", strerror(errno));
		goto fail;
	}
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = e->loop.wakefd };
	if (epoll_ctl(e->loop.epfd, EPOLL_CTL_ADD, e->loop.wakefd, &ev) != 0) {
		snprintf(err, errlen, "epoll_ctl: %s", strerror(errno));
		goto fail;
	}
	return e;
fail:
	fetch_engine_free(e);
	return NULL;
}

void fetch_engine_free(struct fetch_engine *e)
{
	if (!e)
		return;
	fetch_xfers_free(e);
	fetch_cookies_free(e); /* after the handles: a share in use is not freed */
	fetch_proxy_free(e);
	fetch_origins_free(&e->origins);
	fetch_robots_free(e);
	fetch_pace_free(e);
	char ignored[256];
	fetch_warc_free(e, ignored, sizeof(ignored)); /* closed at the run's end, unless no run */
	fetch_output_free(e);
	fetch_metrics_free(e);
	fetch_submit_free(e);
	curl_multi_cleanup(e->loop.multi);
	if (e->loop.epfd >= 0)
		close(e->loop.epfd);
	if (e->loop.wakefd >= 0)
		close(e->loop.wakefd);
	sc_retry_state_free(e->loop.retry);
	free(e);
	fetch_global_release();
}

static bool want_input(struct fetch_engine *e, bool host_blocked)
{
	size_t c = (size_t)e->opts->concurrency;

	if (e->input.eof || e->input.error || e->output.error)
		return false;
	/* An input stream stops being read in a drain; a library's submits
	 * are all pulled, to be cancelled records (one callback each). */
	if ((e->loop.stopping || e->loop.cancel_asked) && !e->opts->read_input_in_drain &&
	    !e->input.pull)
		return false;
	if (e->opts->keep_order && e->output.next_seq - e->output.next_out >= e->output.wsize)
		return false;
	if (e->origins.queued < READAHEAD_BASE(c))
		return true;
	return host_blocked && e->origins.queued < READAHEAD_MAX(c);
}

/* The engine's input hook: a line to the program's rules (on_line), then
 * as many jobs admitted as it allows; the input stops while the engine
 * wants no more work. */
struct reading {
	struct fetch_engine *e;
	double now;
	bool host_blocked;
};

static int engine_line(void *ctx, const struct sc_lines *in, const struct sc_line *line)
{
	struct reading *rd = ctx;
	struct fetch_engine *e = rd->e;

	if (e->input.on_line(e, in, line, e->input.line_ctx) != 0) {
		e->input.error = true;
		return 1;
	}
	admit(e, rd->now, &rd->host_blocked);
	return !want_input(e, rd->host_blocked);
}

/* The library's input (fetch_start): items pulled from the caller
 * while the engine wants more work, as lines are read; the input is at
 * its end for now when the caller has none (it may have more later). */
static void pull_items(struct fetch_engine *e, struct reading *rd)
{
	e->input.eof = false;
	while (want_input(e, rd->host_blocked)) {
		if (e->input.pull(e, e->input.pull_ctx) != 0) {
			e->input.eof = true;
			return;
		}
		admit(e, rd->now, &rd->host_blocked);
	}
}

/* Reads and submits lines while the engine wants more work and the input
 * has some ready (the one input loop of lib/record/input, non-blocking:
 * it returns when no whole line is there).  Returns after admitting what
 * the new lines allow. */
static void read_input(struct fetch_engine *e, double now)
{
	static const struct sc_input_hooks hooks = { .line = engine_line, .nonblocking = true };
	struct reading rd = { .e = e, .now = now };
	char err[SC_INPUT_ERRLEN];

	admit(e, now, &rd.host_blocked);
	e->input.wait = false;
	if (e->input.pull) {
		pull_items(e, &rd);
		return;
	}
	if (!want_input(e, rd.host_blocked))
		return;
	switch (sc_input_run(e->input.in, &hooks, &rd, err)) {
	case SC_INPUT_END:
		e->input.eof = true;
		break;
	case SC_INPUT_WAIT:
		e->input.wait = true;
		break;
	case SC_INPUT_READ_ERROR:
		snprintf(e->loop.error, sizeof(e->loop.error), "%.*s",
		         (int)sizeof(e->loop.error) - 1, err);
		e->input.error = true;
		break;
	case SC_INPUT_STOPPED:
		break;
	}
}

static long long count_lines(int fd)
{
	struct stat st;
	char buf[1 << 16];
	long long lines = 0;
	off_t off = 0;
	ssize_t n;

	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
		return -1;
	off = lseek(fd, 0, SEEK_CUR);
	if (off < 0)
		return -1;
	while ((n = pread(fd, buf, sizeof(buf), off)) > 0) {
		for (char *p = buf; (p = memchr(p, '\n', (size_t)(buf + n - p))); p++)
			lines++;
		off += n;
	}
	return lines;
}

static void process_messages(struct fetch_engine *e)
{
	CURLMsg *msg;
	int left;

	while ((msg = curl_multi_info_read(e->loop.multi, &left))) {
		if (msg->msg != CURLMSG_DONE)
			continue;
		struct transfer *xfer = NULL;
		CURL *easy = msg->easy_handle;
		CURLcode rc = msg->data.result;
		curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&xfer);
		transfer_done(e, xfer, rc);
	}
}

/* The run's set-up: the input's descriptor made non-blocking (and what
 * it was kept), the clocks started.  Returns the descriptor. */
static int run_begin(struct fetch_engine *e, struct sc_lines *in, fetch_line_fn on_line, void *ctx)
{
	int fd = sc_lines_fd(in);
	size_t line_max = fetch_line_max(e->opts, sc_lines_max(in));
	double start = sc_now_ms();

	e->input.in = in;
	e->input.on_line = on_line;
	e->input.line_ctx = ctx;
	e->loop.started_at = start;
	fetch_output_start(e, line_max);
	fetch_origins_start(&e->origins, start);
	if (fetch_metrics_start(e, start, line_max))
		fetch_progress_total(e, count_lines(fd));
	e->input.flags = fcntl(fd, F_GETFL);
	if (e->input.flags >= 0 && !(e->input.flags & O_NONBLOCK))
		fcntl(fd, F_SETFL, e->input.flags | O_NONBLOCK);
	return fd;
}

/* The run's end: the summary, the input as it was, the status. */
static int run_end(struct fetch_engine *e, int fd, char *err, size_t errlen)
{
	char warc_err[256];

	fetch_metrics_end(e);
	/* The archive is closed (renamed from its .open name) when the run
	 * ends, a drained one too; a failure then is the run's. */
	if (!fetch_warc_free(e, warc_err, sizeof(warc_err)) && !e->input.error) {
		snprintf(e->loop.error, sizeof(e->loop.error), "%s", warc_err);
		e->input.error = true;
	}
	poll_input(e, fd, false);
	if (e->input.flags >= 0 && !(e->input.flags & O_NONBLOCK))
		fcntl(fd, F_SETFL, e->input.flags);
	if (e->output.error && !e->input.error && e->output.error_errno == EPIPE)
		return SC_EXIT_PIPE; /* the reader went away: quietly (sc(7)) */
	if (e->output.error || e->input.error) {
		snprintf(err, errlen, "%s", e->output.error ? e->output.message : e->loop.error);
		return SC_EXIT_FAILURE;
	}
	return e->output.records_failed ? SC_EXIT_PARTIAL : SC_EXIT_OK;
}

/* Sleeps until a socket, the input, a signal or timeout_ms, and hands
 * curl what its sockets and its timer have for it. */
static void wait_and_dispatch(struct fetch_engine *e, int fd, double timeout_ms)
{
	struct epoll_event events[64];
	int nev = epoll_wait(e->loop.epfd, events, 64, (int)ceil(timeout_ms));
	int running;

	for (int i = 0; i < nev; i++) {
		int efd = events[i].data.fd;
		if (efd == e->loop.wakefd) {
			uint64_t count;
			ssize_t n = read(e->loop.wakefd, &count, sizeof(count)); /* resets it */
			(void)n;
		} else if (efd != fd || !e->input.polled) {
			uint32_t ev = events[i].events;
			int flags = (ev & EPOLLIN ? CURL_CSELECT_IN : 0) |
			            (ev & EPOLLOUT ? CURL_CSELECT_OUT : 0) |
			            (ev & (EPOLLERR | EPOLLHUP) ? CURL_CSELECT_ERR : 0);
			curl_multi_socket_action(e->loop.multi, efd, flags, &running);
		}
		/* The input: read at the top of the loop. */
	}
	if (sc_now_ms() >= e->loop.curl_timer_at) {
		e->loop.curl_timer_at = INFINITY;
		curl_multi_socket_action(e->loop.multi, CURL_SOCKET_TIMEOUT, 0, &running);
	}
}

/* The first half of a turn of the loop: the drain's steps, retries due,
 * input read, what may start started.  Returns how long the loop may
 * sleep (ms), or a negative number when the run is over: the input done
 * and nothing queued, in flight or waiting. */
static double loop_prepare(struct fetch_engine *e, int fd)
{
	double now = sc_now_ms();

	bool fatal = e->output.error || e->input.error || e->loop.cancel_asked;
	if ((sc_stop_signal || e->loop.drain_asked || fatal) && !e->loop.stopping) {
		start_stopping(e);
		if (fatal)
			e->loop.grace_deadline = now;
	}
	if (e->loop.stopping && !e->loop.aborted && now >= e->loop.grace_deadline) {
		e->loop.aborted = true;
		abort_inflight(e);
	}
	/* Retries whose wait is over go to the front of their queue. */
	while (e->origins.nheap > 0 && e->origins.heap[0]->ready_at <= now) {
		struct job *job = fetch_heap_pop(&e->origins);
		job->queued_at = now;
		fetch_origin_push(&e->origins, job->origin, job, true);
	}
	read_input(e, now);
	bool host_blocked;
	double wake = admit(e, now, &host_blocked);
	e->loop.host_blocked = host_blocked;
	bool input_done = e->input.eof || e->input.error || e->output.error ||
	                  (e->loop.stopping && !e->opts->read_input_in_drain && !e->input.pull);
	if (e->opts->defer_after_ms > 0)
		defer_if_held(e, now, wake, input_done);
	if (input_done && e->xfers.inflight == 0 && e->origins.queued == 0 && e->origins.nheap == 0)
		return -1;

	/* Sleep until a socket, the input, a signal or a clock. */
	double timeout = 1000;
	if (e->origins.nheap > 0)
		timeout = fmin(timeout, e->origins.heap[0]->ready_at - now);
	if (wake < INFINITY)
		timeout = fmin(timeout, wake - now);
	if (e->loop.stopping && !e->loop.aborted)
		timeout = fmin(timeout, e->loop.grace_deadline - now);
	/* --defer-after: woken when the run has lasted the bound. */
	double defer_at = e->loop.started_at + (double)e->opts->defer_after_ms;
	if (e->opts->defer_after_ms > 0 && input_done && e->xfers.inflight == 0 && now < defer_at)
		timeout = fmin(timeout, defer_at - now);
	timeout = fmin(timeout, fetch_metrics_due(e) - now);
	/* read_input may have started transfers since now was read. */
	timeout = fmin(timeout, e->loop.curl_timer_at - sc_now_ms());
	if (timeout < 0)
		timeout = 0;
	if (fd >= 0)
		poll_input(e, fd, e->input.wait && want_input(e, host_blocked));
	return timeout;
}

/* The second half: sleep at most timeout ms, then what curl has done. */
static void loop_dispatch(struct fetch_engine *e, int fd, double timeout)
{
	wait_and_dispatch(e, fd, timeout);
	fetch_pace_record_sent(e);
	process_messages(e);
	fetch_metrics_tick(e, sc_now_ms());
}

int fetch_run(struct fetch_engine *e, struct sc_lines *in, fetch_line_fn on_line, void *ctx,
              char *err, size_t errlen)
{
	int fd = run_begin(e, in, on_line, ctx);
	double timeout;

	while ((timeout = loop_prepare(e, fd)) >= 0)
		loop_dispatch(e, fd, timeout);
	return run_end(e, fd, err, errlen);
}

void fetch_set_record_hook(struct fetch_engine *e, fetch_record_fn fn, void *ctx)
{
	e->output.hook = fn;
	e->output.hook_ctx = ctx;
}

void fetch_set_next_user(struct fetch_engine *e, void *user)
{
	e->output.next_user = user;
}

void fetch_start(struct fetch_engine *e, fetch_pull_fn pull, void *ctx)
{
	size_t line_max = fetch_line_max(e->opts, SC_LINE_MAX);
	double start = sc_now_ms();

	e->input.pull = pull;
	e->input.pull_ctx = ctx;
	e->input.flags = -1;
	e->loop.started_at = start;
	fetch_output_start(e, line_max);
	fetch_origins_start(&e->origins, start);
	fetch_metrics_start(e, start, line_max);
}

bool fetch_step(struct fetch_engine *e, double max_wait_ms)
{
	double timeout = loop_prepare(e, -1);

	if (timeout < 0)
		return false;
	loop_dispatch(e, -1, fmin(timeout, max_wait_ms < 0 ? 0 : max_wait_ms));
	return true;
}

int fetch_fd(const struct fetch_engine *e)
{
	return e->loop.epfd;
}

double fetch_wait(struct fetch_engine *e)
{
	double timeout = loop_prepare(e, -1);

	return timeout < 0 ? INFINITY : timeout;
}

void fetch_cancel_all(struct fetch_engine *e)
{
	if (!e->loop.stopping)
		start_stopping(e);
	if (!e->loop.aborted) {
		e->loop.aborted = true;
		abort_inflight(e);
	}
}

void fetch_request_drain(struct fetch_engine *e)
{
	e->loop.drain_asked = 1;
	fetch_wake(e);
}

void fetch_request_cancel(struct fetch_engine *e)
{
	e->loop.cancel_asked = true;
}

void fetch_finish(struct fetch_engine *e)
{
	fetch_metrics_end(e);
}
