/* browser.c: the headless Chromium of one sc-render run, and the DevTools
 * pipe to it: commands on its fd 3, replies and events on its fd 4, each a
 * JSON object ended by a NUL.  The browser runs in a process group of its
 * own and dies with sc-render (PR_SET_PDEATHSIG); browser_stop kills the
 * whole group, so no Chromium process outlives the run. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/util.h"
#include "record/record.h"
#include "render.h"

#define MSG_MAX ((size_t)512 << 20) /* a message from the browser, at most */

/* Chromium's own traffic off: only the page's requests leave it. */
static const char *const quiet_flags[] = {
	"--headless",
	"--remote-debugging-pipe",
	"--disable-background-networking",
	"--disable-component-update",
	"--disable-sync",
	"--disable-default-apps",
	"--disable-extensions",
	"--disable-breakpad",
	"--disable-domain-reliability",
	"--disable-client-side-phishing-detection",
	"--disable-field-trial-config",
	"--disable-features=Translate,OptimizationHints,MediaRouter,AutofillServerCommunication",
	"--metrics-recording-only",
	"--no-first-run",
	"--no-default-browser-check",
	"--no-pings",
	"--password-store=basic",
	"--use-mock-keychain",
	"--mute-audio",
	"--hide-scrollbars",
	"--disable-dev-shm-usage",
	"--dns-prefetch-disable",
	"--safebrowsing-disable-auto-update",
};

static void child(const struct render_opts *o, const char *profile_arg, int cmd[2], int rep[2],
                  int errp[2])
{
	const char *argv[sizeof(quiet_flags) / sizeof(quiet_flags[0]) + 40];
	int n = 0;

	setpgid(0, 0);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() == 1)
		_exit(127);
	/* fd 3: its commands (the read end of cmd); fd 4: its replies. */
	int c = fcntl(cmd[0], F_DUPFD, 100), r = fcntl(rep[1], F_DUPFD, 100);
	int e = fcntl(errp[1], F_DUPFD, 100);
	if (c < 0 || r < 0 || e < 0 || dup2(c, 3) < 0 || dup2(r, 4) < 0 || dup2(e, 2) < 0)
		_exit(127);
	for (int fd = 5; fd < 1024; fd++)
		close(fd);
	int devnull = open("/dev/null", O_RDWR);
	if (devnull >= 0) {
		(void)dup2(devnull, 0);
		(void)dup2(devnull, 1);
	}
	signal(SIGPIPE, SIG_DFL);
	signal(SIGINT, SIG_IGN); /* sc-render drains first, then ends the browser */
	signal(SIGTERM, SIG_DFL);
	argv[n++] = o->browser;
	for (size_t i = 0; i < sizeof(quiet_flags) / sizeof(quiet_flags[0]); i++)
		argv[n++] = quiet_flags[i];
	argv[n++] = profile_arg;
	if (o->no_sandbox)
		argv[n++] = "--no-sandbox";
	for (int i = 0; i < o->nargs; i++)
		argv[n++] = o->args[i];
	argv[n++] = "about:blank";
	argv[n] = NULL;
	execv(o->browser, (char *const *)argv);
	_exit(127);
}

/* The folder of the profiles: $TMPDIR when it is a path, else /tmp. */
static const char *tmp_dir(void)
{
	const char *t = getenv("TMPDIR");
	return t && *t == '/' ? t : "/tmp";
}

/* Chromium's profile: a small tree; rm is the simplest owner of it. */
static void remove_tree(const char *dir)
{
	pid_t rm = fork();
	if (rm == 0) {
		execl("/bin/rm", "rm", "-rf", "--", dir, (char *)NULL);
		_exit(127);
	}
	if (rm > 0)
		waitpid(rm, NULL, 0);
}

#define PROFILE_OPT "--user-data-dir="

void browser_sweep(void)
{
	DIR *d = opendir(tmp_dir());
	struct dirent *e;

	if (!d)
		return;
	// cppcheck-suppress readdirCalled
	while ((e = readdir(d))) { /* one thread reads it (readdir_r is deprecated) */
		char path[PATH_MAX], *end;
		struct stat st;
		if (strncmp(e->d_name, "sc-render-", 10) != 0)
			continue;
		long pid = strtol(e->d_name + 10, &end, 10);
		if (end == e->d_name + 10 || *end != '-' || strlen(end + 1) != 6 || pid <= 0 ||
		    pid > INT_MAX)
			continue;
		/* Its run is gone (EPERM: another user's, alive). */
		if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", tmp_dir(), e->d_name) >=
		            (int)sizeof(path) ||
		    lstat(path, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid())
			continue;
		remove_tree(path);
	}
	closedir(d);
}

int browser_start(struct browser *b, const struct render_opts *o, char *err, size_t errlen)
{
	int cmd[2], rep[2], errp[2];

	memset(b, 0, sizeof(*b));
	b->to = b->from = b->err = -1;
	if (access(o->browser, X_OK) != 0)
		return snprintf(err, errlen, "%s: %s", o->browser, strerror(errno)), -1;
	/* A profile no one else can have made or can read: mkdtemp's 0700
	 * folder, its name not known before (a name made of the pid alone,
	 * in a /tmp shared with others, could be made first by another user,
	 * who would then read the cookies the browser keeps there). */
	if (asprintf(&b->profile, PROFILE_OPT "%s/sc-render-%d-XXXXXX", tmp_dir(), (int)getpid()) <
	    0)
		sc_die(1, "out of memory");
	if (!mkdtemp(b->profile + strlen(PROFILE_OPT))) {
		snprintf(err, errlen, "%s: %s", b->profile + strlen(PROFILE_OPT), strerror(errno));
		free(b->profile);
		b->profile = NULL;
		return -1;
	}
	if (pipe2(cmd, O_CLOEXEC) < 0 || pipe2(rep, O_CLOEXEC) < 0 || pipe2(errp, O_CLOEXEC) < 0) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		browser_stop(b); /* its profile */
		return -1;
	}
	pid_t pid = fork();
	if (pid < 0) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		browser_stop(b);
		return -1;
	}
	if (pid == 0)
		child(o, b->profile, cmd, rep, errp);
	setpgid(pid, pid); /* the child does it too: whichever runs first */
	close(cmd[0]);
	close(rep[1]);
	close(errp[1]);
	b->pid = pid;
	b->to = cmd[1];
	b->from = rep[0];
	b->err = errp[0];
	fcntl(b->from, F_SETFL, O_NONBLOCK);
	fcntl(b->err, F_SETFL, O_NONBLOCK);
	b->next_id = 1;
	return 0;
}

void browser_stop(struct browser *b)
{
	if (b->pid <= 0) {
		if (b->profile)
			remove_tree(b->profile + strlen(PROFILE_OPT));
		free(b->profile);
		b->profile = NULL;
		return;
	}
	kill(-b->pid, SIGKILL);
	kill(b->pid, SIGKILL);
	waitpid(b->pid, NULL, 0);
	/* The group's other processes (renderers, zygotes) are Chromium's
	 * children: wait, bounded, until none is left. */
	for (int i = 0; i < 200 && kill(-b->pid, 0) == 0; i++) {
		kill(-b->pid, SIGKILL);
		usleep(10000);
	}
	remove_tree(b->profile + strlen(PROFILE_OPT));
	free(b->profile);
	close(b->to);
	close(b->from);
	close(b->err);
	free(b->in);
	free(b->context);
	memset(b, 0, sizeof(*b));
	b->to = b->from = b->err = -1;
}

bool browser_alive(const struct browser *b)
{
	return b->pid > 0 && kill(-b->pid, 0) == 0;
}

long browser_send(struct browser *b, const char *session, const char *method, json_t *params)
{
	json_t *m = json_object();
	long id = b->next_id++;

	json_object_set_new(m, "id", json_integer(id));
	json_object_set_new(m, "method", json_string(method));
	json_object_set_new(m, "params", params ? params : json_object());
	if (session)
		json_object_set_new(m, "sessionId", json_string(session));
	char *text = json_dumps(m, JSON_COMPACT);
	json_decref(m);
	if (text && getenv("SC_RENDER_TRACE"))
		fprintf(stderr, "> %s\n", text);
	if (!text)
		sc_die(1, "out of memory");
	size_t len = strlen(text) + 1; /* the NUL ends the message */
	for (size_t off = 0; off < len;) {
		ssize_t w = write(b->to, text + off, len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			break; /* the browser died: its EOF on fd 4 says so */
		off += (size_t)w;
	}
	free(text);
	return id;
}

int browser_read(struct browser *b, void (*fn)(void *ctx, json_t *msg), void *ctx)
{
	for (;;) {
		if (b->incap - b->inlen < 65536) {
			if (b->incap > MSG_MAX)
				return -1;
			b->incap = b->incap ? b->incap * 2 : 1 << 20;
			b->in = sc_realloc(b->in, b->incap);
		}
		ssize_t n = read(b->from, b->in + b->inlen, b->incap - b->inlen);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (n <= 0)
			return -1;
		size_t start = 0, end = b->inlen + (size_t)n;
		for (size_t i = b->inlen; i < end; i++) {
			if (b->in[i] != '\0')
				continue;
			json_error_t je;
			json_t *msg = json_loadb(b->in + start, i - start, 0, &je);
			if (getenv("SC_RENDER_TRACE"))
				fprintf(stderr, "< %s\n", b->in + start);
			if (msg)
				fn(ctx, msg);
			else if (getenv("SC_RENDER_TRACE"))
				fprintf(stderr, "! %s\n", je.text);
			json_decref(msg);
			start = i + 1;
		}
		memmove(b->in, b->in + start, end - start);
		b->inlen = end - start;
	}
}

void browser_drain_stderr(struct browser *b)
{
	char buf[4096];
	while (b->err >= 0 && read(b->err, buf, sizeof(buf)) > 0)
		;
}

/* The RSS of every process of the browser's group (/proc/PID/stat's pgrp
 * and /proc/PID/statm's resident pages). */
long browser_rss_kib(const struct browser *b)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	long total = 0, page_kib = sysconf(_SC_PAGESIZE) / 1024;

	if (!d || b->pid <= 0)
		return d ? closedir(d), 0 : 0;
	/* sc-render has one thread: readdir is fine. */
	// cppcheck-suppress readdirCalled
	while ((e = readdir(d))) {
		char path[300], buf[512];
		char *end;
		long pid = strtol(e->d_name, &end, 10);
		if (*end || pid <= 0 || getpgid((pid_t)pid) != b->pid)
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/statm", pid);
		FILE *f = fopen(path, "r");
		if (f && fgets(buf, sizeof(buf), f)) {
			/* "size resident ...", in pages */
			char *p = buf;
			(void)strtol(p, &p, 10);
			total += strtol(p, NULL, 10) * page_kib;
		}
		if (f)
			(void)fclose(f);
	}
	closedir(d);
	return total;
}
