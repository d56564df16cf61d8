/* pipeline: read, parse on N threads, write in input order.
 *
 * The reader (the main thread, in the input loop of lib/record/input)
 * copies each line into the next free slot of a ring; workers claim
 * filled slots in sequence and process them; the writer thread waits for
 * the oldest slot to be done, writes it and frees it.  The ring holds 4
 * slots per worker, so at most that many records are in memory however
 * long the stream: the reader waits for a free slot.
 * With one job everything happens on the main thread, in the input loop. */
#include "sc-parse.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/signals.h"
#include "core/util.h"
#include "kit/cli.h"
#include "record/input.h"
#include "record/lines.h"
#include "record/record.h"

#define SLOTS_PER_JOB 4
/* Pages can nest deep; libxml2 recurses in places.  Give workers the main
 * thread's usual stack rather than whatever the default is. */
#define WORKER_STACK (16u << 20)

enum slot_state {
	SLOT_FREE,
	SLOT_FILLED,
	SLOT_DONE
};

/* What one input line became (sc_parser_apply_line). */
struct output {
	char *text; /* its output records, each with its newline (sc_free) */
	size_t len, lineno;
	char *warning; /* the parser's diagnostic (malloced), or NULL */
	size_t not_ok; /* records the parser made not ok */
};

struct slot {
	enum slot_state state;
	char *line; /* malloced copy of the input line */
	size_t len, lineno;
	bool too_long;
	struct output out; /* set by the worker; freed by the writer */
};

struct pipeline {
	const sc_parser *proto; /* each worker parses with a copy */
	const char *input_name;
	pthread_mutex_t mu;
	pthread_cond_t filled; /* a slot was filled, or input ended */
	pthread_cond_t done;   /* a slot was done, or input ended */
	pthread_cond_t freed;  /* the writer freed a slot */
	struct slot *slots;
	size_t nslots;
	size_t next_read, next_claim, next_write; /* sequence numbers */
	bool eof;
	bool write_failed;
	int write_errno;
	size_t not_ok;
};

/* One line through the parser. */
static void process(sc_parser *parser, const char *line, size_t len, size_t lineno, bool too_long,
                    struct output *out)
{
	const char *warning;

	memset(out, 0, sizeof(*out));
	out->lineno = lineno;
	sc_parser_apply_line(parser, line, len, lineno, too_long ? SC_APPLY_TRUNCATED : 0,
	                     &out->text, &out->len);
	warning = sc_parser_warning(parser);
	out->warning = warning ? sc_strdup(warning) : NULL;
	out->not_ok = sc_parser_failed(parser);
}

/* Writes one slot's result.  Returns 0, or -1 with errno. */
static int emit(const char *input_name, const struct output *out)
{
	if (out->warning)
		sc_warn("%s:%zu: %s", input_name, out->lineno, out->warning);
	/* Written as one piece, without the last newline, which
	 * sc_record_write_raw adds. */
	if (out->len > 0)
		return sc_record_write_raw(stdout, out->text, out->len - 1);
	return 0;
}

static void output_free(struct output *out)
{
	sc_free(out->text);
	free(out->warning);
	memset(out, 0, sizeof(*out));
}

static void *worker_main(void *arg)
{
	struct pipeline *pl = arg;
	sc_parser *parser = sc_parser_dup(pl->proto);

	if (!parser)
		sc_die(SC_EXIT_FAILURE, "out of memory");
	pthread_mutex_lock(&pl->mu);
	for (;;) {
		while (pl->next_claim == pl->next_read && !pl->eof)
			pthread_cond_wait(&pl->filled, &pl->mu);
		if (pl->next_claim == pl->next_read)
			break; /* input ended and every slot is claimed */
		struct slot *s = &pl->slots[pl->next_claim++ % pl->nslots];
		pthread_mutex_unlock(&pl->mu);
		process(parser, s->line, s->len, s->lineno, s->too_long, &s->out);
		free(s->line);
		s->line = NULL;
		pthread_mutex_lock(&pl->mu);
		s->state = SLOT_DONE;
		pthread_cond_signal(&pl->done);
	}
	pthread_mutex_unlock(&pl->mu);
	/* libxml2 frees this thread's global state when the thread exits
	 * (not xmlCleanupThreads here: that deletes the key for all). */
	sc_parser_free(parser);
	return NULL;
}

static void *writer_main(void *arg)
{
	struct pipeline *pl = arg;

	pthread_mutex_lock(&pl->mu);
	for (;;) {
		struct slot *s = &pl->slots[pl->next_write % pl->nslots];
		while (!(pl->next_write < pl->next_read && s->state == SLOT_DONE) &&
		       !(pl->eof && pl->next_write == pl->next_read))
			pthread_cond_wait(&pl->done, &pl->mu);
		if (pl->next_write == pl->next_read)
			break;
		bool failed = pl->write_failed;
		int err = 0;
		pthread_mutex_unlock(&pl->mu);
		/* After a failed write, keep draining so nobody waits forever. */
		if (!failed && emit(pl->input_name, &s->out) != 0)
			err = errno ? errno : EIO;
		pthread_mutex_lock(&pl->mu);
		if (err) {
			pl->write_errno = err;
			pl->write_failed = true;
		}
		pl->not_ok += s->out.not_ok;
		output_free(&s->out);
		s->state = SLOT_FREE;
		pl->next_write++;
		pthread_cond_signal(&pl->freed);
	}
	pthread_mutex_unlock(&pl->mu);
	return NULL;
}

/* Ends the run: the exit status, after reporting a failed write. */
static int finish(bool write_failed, int write_errno, bool read_failed, size_t not_ok)
{
	if (write_failed) {
		/* A reader that went away (`| head -1`) is no error: quiet. */
		if (write_errno == EPIPE)
			return SC_EXIT_PIPE;
		errno = write_errno;
		sc_warn("error writing standard output:");
		return SC_EXIT_FAILURE;
	}
	if (read_failed)
		return SC_EXIT_FAILURE;
	return not_ok > 0 ? SC_EXIT_PARTIAL : SC_EXIT_OK;
}

/* One job: each line parsed and written on this thread (sc_input_run's
 * line hook), until a write fails. */
struct single {
	sc_parser *parser;
	const char *input_name;
	size_t not_ok;
	bool write_failed;
	int write_errno;
};

static int single_line(void *ctx, const struct sc_lines *in, const struct sc_line *line)
{
	struct single *one = ctx;
	struct output out;

	(void)in;
	process(one->parser, line->text, line->len, line->number, line->too_long, &out);
	one->not_ok += out.not_ok;
	if (emit(one->input_name, &out) != 0) {
		one->write_errno = errno;
		one->write_failed = true;
	}
	output_free(&out);
	return one->write_failed;
}

static int run_single(sc_parser *parser, const char *input_name, struct sc_lines *r)
{
	static const struct sc_input_hooks hooks = { .line = single_line };
	struct single one = { .parser = parser, .input_name = input_name };
	char err[SC_INPUT_ERRLEN];
	bool read_failed;

	read_failed = sc_input_run(r, &hooks, &one, err) == SC_INPUT_READ_ERROR;
	if (read_failed)
		sc_warn("%s", err);
	return finish(one.write_failed, one.write_errno, read_failed, one.not_ok);
}

/* The reader's line hook: the line into the next free slot, waiting for
 * one; stops the input once a write failed (nobody would read what
 * follows). */
static int queue_line(void *ctx, const struct sc_lines *in, const struct sc_line *line)
{
	struct pipeline *pl = ctx;

	(void)in;
	pthread_mutex_lock(&pl->mu);
	while (pl->next_read - pl->next_write >= pl->nslots && !pl->write_failed)
		pthread_cond_wait(&pl->freed, &pl->mu);
	bool failed = pl->write_failed;
	pthread_mutex_unlock(&pl->mu);
	if (failed)
		return 1;
	/* The slot is free and only the reader fills: no lock needed to
	 * copy into it. */
	struct slot *s = &pl->slots[pl->next_read % pl->nslots];
	s->line = sc_malloc(line->len + 1);
	memcpy(s->line, line->text, line->len + 1);
	s->len = line->len;
	s->lineno = line->number;
	s->too_long = line->too_long;
	pthread_mutex_lock(&pl->mu);
	s->state = SLOT_FILLED;
	pl->next_read++;
	pthread_cond_signal(&pl->filled);
	pthread_mutex_unlock(&pl->mu);
	return 0;
}

static int run_threads(const sc_parser *parser, const char *input_name, struct sc_lines *r,
                       int jobs)
{
	struct pipeline pl = { .proto = parser, .input_name = input_name };
	pthread_t *workers = sc_calloc((size_t)jobs, sizeof(*workers));
	pthread_t writer;
	pthread_attr_t attr;
	static const struct sc_input_hooks hooks = { .line = queue_line };
	char err[SC_INPUT_ERRLEN];
	bool read_failed = false;

	pl.nslots = (size_t)jobs * SLOTS_PER_JOB;
	pl.slots = sc_calloc(pl.nslots, sizeof(*pl.slots));
	pthread_mutex_init(&pl.mu, NULL);
	pthread_cond_init(&pl.filled, NULL);
	pthread_cond_init(&pl.done, NULL);
	pthread_cond_init(&pl.freed, NULL);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, WORKER_STACK);
	for (int i = 0; i < jobs; i++)
		if ((errno = pthread_create(&workers[i], &attr, worker_main, &pl)) != 0)
			sc_die(SC_EXIT_FAILURE, "cannot start a thread:");
	if ((errno = pthread_create(&writer, NULL, writer_main, &pl)) != 0)
		sc_die(SC_EXIT_FAILURE, "cannot start a thread:");
	pthread_attr_destroy(&attr);

	if (sc_input_run(r, &hooks, &pl, err) == SC_INPUT_READ_ERROR) {
		sc_warn("%s", err);
		read_failed = true;
	}
	pthread_mutex_lock(&pl.mu);
	pl.eof = true;
	pthread_cond_broadcast(&pl.filled);
	pthread_cond_broadcast(&pl.done);
	pthread_mutex_unlock(&pl.mu);
	for (int i = 0; i < jobs; i++)
		pthread_join(workers[i], NULL);
	pthread_join(writer, NULL);

	free(workers);
	free(pl.slots);
	pthread_mutex_destroy(&pl.mu);
	pthread_cond_destroy(&pl.filled);
	pthread_cond_destroy(&pl.done);
	pthread_cond_destroy(&pl.freed);
	return finish(pl.write_failed, pl.write_errno, read_failed, pl.not_ok);
}

int run_pipeline(sc_parser *parser, const char *input_name, int fd, int jobs)
{
	struct sc_lines *r = sc_lines_open(fd, input_name);
	int status;

	if (!r)
		sc_die(SC_EXIT_FAILURE, "out of memory");
	status = jobs <= 1 ? run_single(parser, input_name, r)
	                   : run_threads(parser, input_name, r, jobs);
	sc_lines_close(r);
	return status;
}
