/* chart: the HTML's charts, drawn by gnuplot.  Owns the gnuplot script
 * (the timeline's bins as inline data blocks, one SVG output per chart),
 * the child process (one run for every chart, in a temporary directory
 * removed afterwards) and reading its SVG back.  When gnuplot cannot run,
 * the charts are missing and why says so; nothing here prints. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/util.h"
#include "report.h"

#define SVG_MAX (16u << 20)

static const char *const chart_files[CH_COUNT] = { "latency.svg", "rate.svg", "bytes.svg",
	                                           "status.svg" };

const char *chart_title(enum chart_id id)
{
	static const char *const titles[CH_COUNT] = {
		"Latency over time (ms; ok and errors apart)",
		"Requests per second",
		"Bytes per second",
		"Status classes over time (responses per second)",
	};
	return titles[id];
}

/* One data block: time, then the bin's figures (a gap, "-", where a bin
 * has none). */
static void write_data(FILE *s, const struct report *r)
{
	const struct timeline *tl = &r->tl;
	double w = (double)tl->width;

	fprintf(s, "$bins << EOD\n");
	for (size_t i = 0; i < tl->n; i++) {
		const struct bin *b = &tl->bins[i];
		fprintf(s, "%lld", (long long)(tl->base + (int64_t)i * tl->width));
		if (b->ok)
			fprintf(s, " %.2f %.2f", (double)b->ok_sum / (double)b->ok,
			        (double)b->ok_max);
		else
			fprintf(s, " NaN NaN"); /* undefined: a gap in the line */
		if (b->errors)
			fprintf(s, " %.2f %.2f", (double)b->err_sum / (double)b->errors,
			        (double)b->err_max);
		else
			fprintf(s, " NaN NaN"); /* undefined: a gap in the line */
		fprintf(s, " %.3f %.3f %.1f %u", b->requests / w, b->errors / w,
		        (double)b->bytes / w, b->throttles);
		for (int k = 0; k < SC_CLASSES; k++)
			fprintf(s, " %.3f", b->status[k] / w);
		fputc('\n', s);
	}
	fprintf(s, "EOD\n");
}

/* The rounds as shaded bands behind every chart. */
static void write_rounds(FILE *s, const struct report *r)
{
	for (size_t i = 0; i < r->nrounds; i++) {
		const struct round *rd = &r->rounds[i];
		double from = rd->first_ms / 1000.0, to = rd->last_ms / 1000.0 + 0.5;
		fprintf(s,
		        "set object %zu rect from %.3f, graph 0 to %.3f, graph 1 behind "
		        "fc rgb '%s' fs solid 1.0 noborder\n",
		        i + 1, from, to, i % 2 ? "#eef2fb" : "#f6f6f6");
		fprintf(s,
		        "set label %zu 'round %ld' at %.3f, graph 0.96 left font ',8' tc rgb "
		        "'#666666'\n",
		        i + 1, rd->number, from);
	}
}

/* throttles: the most throttle events in one bin (0: no y2 axis).  The
 * charts are named as they are, in gnuplot's directory (run_gnuplot): no
 * path goes into the script, where a quote or a line break in it (from
 * TMPDIR) would be gnuplot's to run. */
static void write_plots(FILE *s, uint32_t throttles)
{
	fprintf(s, "set output '%s'\nset ylabel 'ms'\n", chart_files[CH_LATENCY]);
	fprintf(s, "plot $bins using 1:2 with lines lw 1.5 lc rgb '#1f77b4' title 'ok: mean', "
	           "'' using 1:3 with lines lc rgb '#9ecae1' title 'ok: max', "
	           "'' using 1:4 with points pt 7 ps 0.4 lc rgb '#d62728' title 'errors: mean', "
	           "'' using 1:5 with points pt 6 ps 0.4 lc rgb '#ff9896' title 'errors: max'\n");
	fprintf(s, "set output '%s'\nset ylabel 'requests/s'\n", chart_files[CH_RATE]);
	if (throttles)
		fprintf(s, "set y2label 'throttle events'\nset y2tics%s\nset y2range [0:*]\n",
		        throttles <= 10 ? " 1" : "");
	fprintf(s,
	        "plot $bins using 1:6 with lines lw 1.5 lc rgb '#1f77b4' title 'requests/s', "
	        "'' using 1:7 with lines lc rgb '#d62728' title 'errors/s'%s\n",
	        throttles ? ", '' using 1:9 axes x1y2 with impulses lw 2 lc rgb '#ff7f0e' "
	                    "title 'throttle events'"
	                  : "");
	fprintf(s, "unset y2label\nunset y2tics\n");
	fprintf(s, "set output '%s'\nset ylabel 'bytes/s'\n", chart_files[CH_BYTES]);
	fprintf(s, "plot $bins using 1:8 with lines lw 1.5 lc rgb '#2ca02c' title 'bytes/s'\n");
	fprintf(s, "set output '%s'\nset ylabel 'responses/s'\n", chart_files[CH_STATUS]);
	fprintf(s, "plot $bins using 1:12 with lines lc rgb '#2ca02c' title '2xx', "
	           "'' using 1:13 with lines lc rgb '#1f77b4' title '3xx', "
	           "'' using 1:14 with lines lc rgb '#ff7f0e' title '4xx', "
	           "'' using 1:15 with lines lc rgb '#d62728' title '5xx', "
	           "'' using 1:10 with lines lc rgb '#7f7f7f' title 'none'\n");
}

static bool write_script(const char *path, const struct report *r)
{
	FILE *s = fopen(path, "w");

	if (!s)
		return false;
	fprintf(s, "set terminal svg size 900,280 dynamic font 'sans,10' background '#ffffff'\n"
	           "set xdata time\nset timefmt '%%s'\n"
	           "set format x '%%H:%%M:%%S'\nset xlabel 'time (UTC)'\n"
	           /* The same margins on every chart, so that their time axes line up. */
	           "set key outside top center horizontal\nset lmargin 12\nset rmargin 10\n"
	           "set grid ytics lc rgb '#dddddd'\nset yrange [0:*]\nset border 3\n"
	           "set xtics nomirror\nset ytics nomirror\n");
	write_data(s, r);
	write_rounds(s, r);
	uint32_t most = 0;
	for (size_t i = 0; i < r->tl.n; i++)
		most = r->tl.bins[i].throttles > most ? r->tl.bins[i].throttles : most;
	write_plots(s, most);
	return fclose(s) == 0;
}

/* Runs gnuplot on dir's plot.gp, in dir; false with why. */
static bool run_gnuplot(const char *dir, const char *errpath, char *why, size_t whylen)
{
	const char *name = getenv("SC_GNUPLOT");
	int status;

	if (!name || !*name)
		name = "gnuplot";
	/* A relative path to it is from here, not from dir. */
	char *absolute = strchr(name, '/') && name[0] != '/' ? realpath(name, NULL) : NULL;
	const char *prog = absolute ? absolute : name;
	pid_t pid = fork();
	if (pid < 0) {
		snprintf(why, whylen, "cannot start gnuplot: %s", strerror(errno));
		free(absolute);
		return false;
	}
	if (pid == 0) {
		int fd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0 || chdir(dir) != 0)
			_exit(126);
		execlp(prog, prog, "plot.gp", (char *)NULL);
		_exit(errno == ENOENT ? 127 : 126);
	}
	free(absolute);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
		snprintf(why, whylen, "%s was not found (install gnuplot; Debian: gnuplot-nox)",
		         name);
	else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		snprintf(why, whylen, "%s failed (status %d)", name,
		         WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
	else
		return true;
	return false;
}

/* The <svg> element of a file gnuplot wrote (its XML prolog cut). */
static char *read_svg(const char *path)
{
	FILE *f = fopen(path, "r");
	struct stat st;

	if (!f)
		return NULL;
	if (fstat(fileno(f), &st) != 0 || st.st_size <= 0 || st.st_size > SVG_MAX) {
		(void)fclose(f);
		return NULL;
	}
	size_t size = (size_t)st.st_size;
	char *text = sc_malloc(size + 1);
	size_t n = fread(text, 1, size, f);
	(void)fclose(f); /* read only: the bytes read are what counts */
	text[n] = '\0';
	char *svg = strstr(text, "<svg");
	if (!svg) {
		free(text);
		return NULL;
	}
	memmove(text, svg, strlen(svg) + 1);
	return text;
}

static void cleanup(const char dir[1024])
{
	static const char *const others[] = { "plot.gp", "gnuplot.err" };
	char path[1100];

	for (int i = 0; i < CH_COUNT; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, chart_files[i]);
		unlink(path);
	}
	for (size_t i = 0; i < sizeof(others) / sizeof(*others); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, others[i]);
		unlink(path);
	}
	rmdir(dir);
}

void charts_draw(const struct report *r, struct charts *c)
{
	const char *tmp = getenv("TMPDIR");
	char dir[1024], script[1100], err[1100], path[1100];

	memset(c, 0, sizeof(*c));
	if (r->tl.n == 0) {
		snprintf(c->why, sizeof(c->why), "no request line has a time stamp");
		return;
	}
	if (!tmp || !*tmp || strlen(tmp) > 900)
		tmp = "/tmp";
	snprintf(dir, sizeof(dir), "%s/sc-report.XXXXXX", tmp);
	if (!mkdtemp(dir)) {
		snprintf(c->why, sizeof(c->why), "cannot make a temporary directory: %s",
		         strerror(errno));
		return;
	}
	snprintf(script, sizeof(script), "%s/plot.gp", dir);
	snprintf(err, sizeof(err), "%s/gnuplot.err", dir);
	if (!write_script(script, r))
		snprintf(c->why, sizeof(c->why), "cannot write the gnuplot script: %s",
		         strerror(errno));
	else if (run_gnuplot(dir, err, c->why, sizeof(c->why)))
		for (int i = 0; i < CH_COUNT; i++) {
			snprintf(path, sizeof(path), "%s/%s", dir, chart_files[i]);
			if (!(c->svg[i] = read_svg(path)))
				snprintf(c->why, sizeof(c->why),
				         "gnuplot wrote no SVG for a chart");
		}
	cleanup(dir);
}

void charts_free(struct charts *c)
{
	for (int i = 0; i < CH_COUNT; i++)
		free(c->svg[i]);
	memset(c, 0, sizeof(*c));
}
