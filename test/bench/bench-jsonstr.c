/* bench-jsonstr: the speed of lib/jsonstr's writers on a corpus of files
 * (`make bench` runs it on the Python documentation, every *.html under
 * /usr/share/doc/python3.11/html from Debian's python3.11-doc).
 *
 *   bench-jsonstr DIR [SECONDS]
 *
 * Each file is one string, as sc-fetch writes one body: for each writer
 * (the scalar reference, then each fast path this CPU has, both entry
 * points) the whole corpus is written over and over into a reused buffer
 * for SECONDS of CPU time (default 1), and the best of three rounds is
 * printed in GB/s of input per CPU second.  jansson's json_dumps is printed alongside for scale. */
#include <fcntl.h>
#include <ftw.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/utf8.h"
#include "core/util.h"
#include "record/jsonstr.h"

struct file {
	char *p;
	size_t n;
};

static struct file *files;
static size_t nfiles, total, nonascii_files;

static int add_file(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	size_t len = strlen(path);
	int fd;

	(void)ftw;
	if (type != FTW_F || len < 5 || strcmp(path + len - 5, ".html") != 0 || st->st_size == 0)
		return 0;
	if ((fd = open(path, O_RDONLY)) < 0)
		return 0;
	char *p = sc_malloc((size_t)st->st_size);
	ssize_t got = read(fd, p, (size_t)st->st_size);
	close(fd);
	if (got != st->st_size || !sc_utf8_valid((unsigned char *)p, (size_t)got)) {
		free(p);
		return 0;
	}
	for (ssize_t i = 0; i < got; i++)
		if ((unsigned char)p[i] >= 0x80) {
			nonascii_files++;
			break;
		}
	files = sc_realloc(files, (nfiles + 1) * sizeof(*files));
	files[nfiles++] = (struct file){ p, (size_t)got };
	total += (size_t)got;
	return 0;
}

/* This thread's CPU time in ms: the machine may be shared, and time spent
 * waiting for a core is not the writer's. */
static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

enum writer {
	REF,
	FAST,
	FAST_CHECKED,
	JANSSON
};

static size_t out_bytes;

/* One pass over the corpus. */
static void pass(enum writer w, struct sc_buf *b)
{
	for (size_t i = 0; i < nfiles; i++) {
		int rc = 0;
		sc_buf_reset(b);
		switch (w) {
		case REF:
			rc = sc_jsonstr_escape_ref(b, files[i].p, files[i].n, true,
			                           SC_JSONSTR_NO_NUL);
			break;
		case FAST:
			rc = sc_jsonstr_escape(b, files[i].p, files[i].n);
			break;
		case FAST_CHECKED:
			rc = sc_jsonstr_escape_checked(b, files[i].p, files[i].n,
			                               SC_JSONSTR_NO_NUL);
			break;
		case JANSSON: {
			json_t *v = json_stringn(files[i].p, files[i].n);
			char *text = json_dumps(v, JSON_ENCODE_ANY);
			rc = text ? 0 : -1;
			if (text)
				sc_buf_add(b, text, strlen(text));
			free(text);
			json_decref(v);
			break;
		}
		}
		if (rc != 0)
			sc_die(1, "writer %d failed on file %zu", (int)w, i);
		out_bytes += b->len;
	}
}

static double gbps(enum writer w, double seconds)
{
	struct sc_buf b;
	double best = 0;

	sc_buf_init(&b, (size_t)1 << 30);
	pass(w, &b); /* warm the caches and the buffer */
	for (int round = 0; round < 3; round++) {
		double t0 = cpu_ms(), t;
		size_t passes = 0;
		do {
			pass(w, &b);
			passes++;
			t = cpu_ms() - t0;
		} while (t < seconds * 1000 / 3);
		double rate = (double)total * (double)passes / (t / 1000) / 1e9;
		if (rate > best)
			best = rate;
	}
	sc_buf_free(&b);
	return best;
}

int main(int argc, char **argv)
{
	static const struct {
		enum sc_jsonstr_path path;
		const char *name;
	} paths[] = { { SC_JSONSTR_WORDS, "words" },
		      { SC_JSONSTR_SSE2, "sse2" },
		      { SC_JSONSTR_AVX2, "avx2" } };
	double seconds = argc > 2 ? strtod(argv[2], NULL) : 1.0;

	sc_setprogname(argv[0]);
	if (argc < 2)
		sc_die(2, "usage: bench-jsonstr dir [seconds]");
	if (nftw(argv[1], add_file, 16, FTW_PHYS) != 0 || nfiles == 0)
		sc_die(1, "%s: no readable UTF-8 *.html files", argv[1]);
	printf("## JSON string writer (lib/jsonstr), %zu files of %s, %.1f MB, %zu with "
	       "non-ASCII\n\n",
	       nfiles, argv[1], (double)total / 1e6, nonascii_files);
	struct sc_buf b;
	sc_buf_init(&b, (size_t)1 << 30);
	pass(FAST, &b);
	double grew = (double)out_bytes / (double)total;
	sc_buf_free(&b);
	printf("| writer | GB/s of input |\n|---|---|\n");
	printf("| jansson json_dumps (for scale) | %.2f |\n", gbps(JANSSON, seconds));
	printf("| scalar reference (checked) | %.2f |\n", gbps(REF, seconds));
	for (size_t k = 0; k < sizeof(paths) / sizeof(paths[0]); k++) {
		if (!sc_jsonstr_use(paths[k].path))
			continue;
		printf("| %s, UTF-8 known | %.2f |\n", paths[k].name, gbps(FAST, seconds));
		printf("| %s, checked (bodies) | %.2f |\n", paths[k].name,
		       gbps(FAST_CHECKED, seconds));
	}
	sc_jsonstr_use(SC_JSONSTR_AUTO);
	printf("\nescaped/raw size: %.3f; the programs take the %s path\n", grew,
	       sc_jsonstr_path_name());
	return 0;
}
