/* bench-parsefloor: the floor of sc-parse's default fields, a bare libxml2
 * HTML SAX pass over a corpus of pages (test/bench/parse.py runs it on the
 * pages it gives sc-parse, and reports sc-parse's CPU over this one's).
 *
 *   bench-parsefloor DIR...
 *
 * Every regular *.html file under each DIR (symlinks left out, as the
 * bench's records leave them out) is read and parsed, one after the other,
 * by one reused parser context with sc-parse's options (lib/parse/body.c),
 * and a SAX handler that does the least the default fields need: the
 * title's text gathered, each <a href> counted.  Nothing else: no record
 * decoded, no JSON written, no URL resolved, no charset sniffed.  Prints
 * one line: pages, bytes, titles and hrefs, so that a run that parsed
 * nothing shows it.  Its CPU time is measured from outside, as sc-parse's
 * is (the process's user + system). */
#include <dirent.h>
#include <fcntl.h>
#include <libxml/HTMLparser.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/util.h"

/* lib/parse/body.c's PARSE_OPTIONS. */
#define FLOOR_OPTIONS                                                                        \
	(HTML_PARSE_RECOVER | HTML_PARSE_NOERROR | HTML_PARSE_NOWARNING | HTML_PARSE_NONET | \
	 HTML_PARSE_COMPACT | HTML_PARSE_IGNORE_ENC | XML_PARSE_HUGE)

struct floor {
	struct sc_buf title;
	int in_title;
	unsigned long pages, titles, hrefs;
	unsigned long long bytes;
};

static void on_start(void *ctx, const xmlChar *name, const xmlChar **atts)
{
	struct floor *f = ((htmlParserCtxtPtr)ctx)->_private;

	if (strcmp((const char *)name, "title") == 0) {
		f->in_title = 1;
		f->titles++;
		sc_buf_reset(&f->title);
	} else if (name[0] == 'a' && name[1] == '\0' && atts) {
		for (const xmlChar **a = atts; a[0]; a += 2)
			if (strcmp((const char *)a[0], "href") == 0 && a[1])
				f->hrefs++;
	}
}

static void on_end(void *ctx, const xmlChar *name)
{
	struct floor *f = ((htmlParserCtxtPtr)ctx)->_private;

	if (f->in_title && strcmp((const char *)name, "title") == 0)
		f->in_title = 0;
}

static void on_text(void *ctx, const xmlChar *s, int n)
{
	struct floor *f = ((htmlParserCtxtPtr)ctx)->_private;

	if (f->in_title)
		sc_buf_add(&f->title, (const char *)s, (size_t)n);
}

static void parse_file(htmlParserCtxtPtr ctxt, struct floor *f, const char *path)
{
	struct stat st;
	int fd = open(path, O_RDONLY);

	if (fd < 0 || fstat(fd, &st) != 0 || st.st_size == 0) {
		if (fd >= 0)
			close(fd);
		return;
	}
	char *p = sc_malloc((size_t)st.st_size);
	ssize_t got = read(fd, p, (size_t)st.st_size);
	close(fd);
	if (got == st.st_size) {
		htmlCtxtReset(ctxt);
		htmlDocPtr doc =
		        htmlCtxtReadMemory(ctxt, p, (int)got, path, "UTF-8", FLOOR_OPTIONS);
		if (doc) /* not with these callbacks; to be sure */
			xmlFreeDoc(doc);
		f->pages++;
		f->bytes += (unsigned long long)got;
	}
	free(p);
}

/* Each directory's entries in name order, so that runs are alike. */
static void walk(htmlParserCtxtPtr ctxt, struct floor *f, const char *dir)
{
	struct dirent **names;
	int n = scandir(dir, &names, NULL, alphasort);

	for (int i = 0; i < n; i++) {
		const char *name = names[i]->d_name;
		size_t len = strlen(name);
		struct stat st;
		char *path;

		if (name[0] == '.' || asprintf(&path, "%s/%s", dir, name) < 0) {
			free(names[i]);
			continue;
		}
		if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
			walk(ctxt, f, path);
		else if (S_ISREG(st.st_mode) && len > 5 && strcasecmp(name + len - 5, ".html") == 0)
			parse_file(ctxt, f, path);
		free(path);
		free(names[i]);
	}
	free(names);
}

int main(int argc, char **argv)
{
	struct floor f = { 0 };
	htmlParserCtxtPtr ctxt;
	xmlSAXHandler *sax;

	if (argc < 2) {
		fprintf(stderr, "usage: bench-parsefloor DIR...\n");
		return 2;
	}
	if (!(ctxt = htmlNewParserCtxt()))
		sc_die(1, "out of memory");
	sax = ctxt->sax;
	memset(sax, 0, sizeof(*sax));
	sax->initialized = 1;
	sax->startElement = on_start;
	sax->endElement = on_end;
	sax->characters = on_text;
	sax->cdataBlock = on_text;
	ctxt->_private = &f;
	for (int i = 1; i < argc; i++)
		walk(ctxt, &f, argv[i]);
	printf("pages %lu bytes %llu titles %lu hrefs %lu\n", f.pages, f.bytes, f.titles, f.hrefs);
	htmlFreeParserCtxt(ctxt);
	sc_buf_free(&f.title);
	return f.pages ? 0 : 1;
}
