/* tab.c: a tab renders one page at a time over its flattened session:
 * navigate, wait for the condition (capped by -m), read the DOM, make the
 * record.  Every command it waits for has a deadline; a tab that misses
 * one, crashes or detaches is closed and its page tried once more in a
 * fresh tab, then failed as a render error record. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/base64.h"
#include "core/util.h"
#include "render.h"

#define POLL_MS 100
#define GROW_MS 3000 /* a scroll waits this long for the page to grow, at most */

static const char *str(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

static void set_str(char **dst, const char *s)
{
	free(*dst);
	*dst = s ? sc_strdup(s) : NULL;
}

static void track(struct render *r, struct tab *t, long id, double deadline)
{
	t->pending = id;
	t->deadline = deadline;
	(void)r;
}

static long send_tab(struct render *r, struct tab *t, const char *method, json_t *params)
{
	return browser_send(&r->b, t->session, method, params);
}

/* The tab is gone or unusable: close it; its page is tried again or fails. */
static void tab_drop(struct render *r, struct tab *t, const char *why)
{
	if (t->target && r->b.pid > 0)
		browser_send(&r->b, NULL, "Target.closeTarget",
		             json_pack("{s:s}", "targetId", t->target));
	struct page *p = t->page;
	set_str(&t->target, NULL);
	set_str(&t->session, NULL);
	set_str(&t->doc_request, NULL);
	set_str(&t->mime, NULL);
	set_str(&t->loader, NULL);
	set_str(&t->shot_path, NULL);
	set_str(&t->js_error, NULL);
	json_decref(t->js_result);
	t->js_result = NULL;
	set_str(&t->refused_doc, NULL);
	admit_page_end(r, t);
	warc_tab_free(r, t);
	json_decref(t->missing);
	t->missing = NULL;
	json_decref(t->dom);
	t->dom = NULL;
	t->state = TAB_FREE;
	t->page = NULL;
	t->pending = 0;
	t->pages = 0;
	if (!p)
		return;
	r->in_flight--;
	if (p->attempts < 2 && !r->draining) {
		p->next = r->queue; /* first in line */
		r->queue = p;
		if (!r->queue_tail)
			r->queue_tail = p;
		r->queued++;
		return;
	}
	record_emit(r, p, t, NULL, NULL, "render", why);
	page_free(p);
}

void tabs_lost(struct render *r, const char *why)
{
	for (int i = 0; i < r->opts.concurrency; i++) {
		struct tab *t = &r->tabs[i];
		set_str(&t->target, NULL); /* nothing to close: the browser is gone */
		tab_drop(r, t, why);
	}
}

static void navigate(struct render *r, struct tab *t, double now)
{
	struct page *p = t->page;

	t->requests = t->failed = t->blocked = t->console_errors = t->dialogs = 0;
	json_decref(t->request_ids);
	t->request_ids = NULL;
	t->status = 0;
	t->loaded = t->dcl = t->idle = t->timed_out = t->answered = t->doc_paused = false;
	t->scrolls = t->scrolled = 0;
	t->shot = t->script_ran = false;
	set_str(&t->shot_path, NULL);
	set_str(&t->js_error, NULL);
	json_decref(t->js_result);
	t->js_result = NULL;
	t->stable_hash = -1;
	set_str(&t->doc_request, NULL);
	set_str(&t->loader, NULL);
	set_str(&t->mime, NULL);
	t->page_deadline = now + r->opts.timeout_ms;
	t->seq = ++r->seq;
	set_str(&t->refused_doc, NULL);
	json_decref(t->missing);
	t->missing = NULL;
	/* Every request paused when admit.c has a say (or --from-warc
	 * answers them); else only the document a fetched body answers.
	 * --warc pauses every response too, to take its body. */
	json_t *patterns = json_array();
	if (admit_intercepts(r))
		json_array_append_new(patterns, json_pack("{s:s}", "urlPattern", "*"));
	else if (p->body || page_overrides(p))
		json_array_append_new(patterns, json_pack("{s:s,s:s}", "urlPattern", "*",
		                                          "resourceType", "Document"));
	if (r->warc)
		json_array_append_new(patterns, json_pack("{s:s,s:s}", "urlPattern", "*",
		                                          "requestStage", "Response"));
	if (json_array_size(patterns))
		send_tab(r, t, "Fetch.enable", json_pack("{s:o}", "patterns", patterns));
	else
		send_tab(r, t, "Fetch.disable", NULL), json_decref(patterns);
	track(r, t, send_tab(r, t, "Page.navigate", json_pack("{s:s}", "url", p->url)),
	      t->page_deadline);
	t->state = TAB_LOADING;
	t->next_poll = now;
}

/* The page begins: what its jar holds that the context lacks put into it
 * first, then the navigation. */
static void begin(struct render *r, struct tab *t, double now)
{
	long id = cookies_before(r, t->jar);

	if (!id) {
		navigate(r, t, now);
		return;
	}
	t->state = TAB_COOKIES_IN;
	track(r, t, id, now + r->opts.command_ms);
}

/* A target in the tab's jar's context. */
static void create_target(struct render *r, struct tab *t, double now)
{
	t->state = TAB_CREATING;
	track(r, t,
	      browser_send(&r->b, NULL, "Target.createTarget",
	                   json_pack("{s:s,s:s}", "url", "about:blank", "browserContextId",
	                             jar_context(r, t->jar))),
	      now + r->opts.command_ms);
}

static void close_target(struct render *r, struct tab *t)
{
	browser_send(&r->b, NULL, "Target.closeTarget", json_pack("{s:s}", "targetId", t->target));
	set_str(&t->target, NULL);
	set_str(&t->session, NULL);
	t->state = TAB_FREE;
	t->pages = 0;
}

void tab_start_page(struct render *r, struct tab *t, struct page *p)
{
	double now = sc_now_ms();
	struct jar *j = jar_of(r, p->session);

	t->page = p;
	p->attempts++;
	r->in_flight++;
	r->b.pages++;
	/* A tab is of one context: a page of another jar takes a new one. */
	if (t->state == TAB_IDLE && t->jar != j)
		close_target(r, t);
	t->jar = j;
	if (t->state == TAB_IDLE) {
		begin(r, t, now);
		return;
	}
	if (!jar_context(r, j)) {
		/* A session's first page since the browser started. */
		t->state = TAB_CONTEXT;
		track(r, t, jar_make(r, j), now + r->opts.command_ms);
		return;
	}
	create_target(r, t, now);
}

/* A jar's context is made (or refused): its tabs that waited go on. */
static void context_made(struct render *r, const struct jar *j, const json_t *msg)
{
	double now = sc_now_ms();
	char why[256];

	snprintf(why, sizeof(why), "the browser refused a context: %s",
	         str(json_object_get(msg, "error"), "message")
	                 ? str(json_object_get(msg, "error"), "message")
	                 : "?");
	for (int i = 0; i < r->opts.concurrency; i++) {
		struct tab *t = &r->tabs[i];
		if (t->state != TAB_CONTEXT || t->jar != j)
			continue;
		t->pending = 0;
		if (j->context)
			create_target(r, t, now);
		else
			tab_drop(r, t, why);
	}
}

/* Reads the document as it stands. */
static void read_dom(struct render *r, struct tab *t, double now)
{
	static const char expr[] =
	        "(() => { const d = document; let s = '';"
	        " if (d.doctype) s = new XMLSerializer().serializeToString(d.doctype);"
	        " if (d.documentElement) s += d.documentElement.outerHTML;"
	        " return { url: location.href, html: s, type: d.contentType }; })()";
	t->state = TAB_READING;
	track(r, t,
	      send_tab(r, t, "Runtime.evaluate",
	               json_pack("{s:s,s:b}", "expression", expr, "returnByValue", 1)),
	      now + r->opts.command_ms);
}

/* Scrolls to the end once and waits, in the page, for it to grow: at most
 * GROW_MS, less when the command's deadline or the page's (-m) is nearer.
 * False when there is no time left for it. */
static bool scroll_once(struct render *r, struct tab *t, double now)
{
	double ms = GROW_MS;
	char expr[400];

	if (ms > r->opts.command_ms * 0.75)
		ms = r->opts.command_ms * 0.75;
	if (ms > t->page_deadline - now - 100)
		ms = t->page_deadline - now - 100;
	if (ms < 50)
		return false;
	snprintf(expr, sizeof(expr),
	         "(async () => { const e = document.scrollingElement || document.documentElement;"
	         " if (!e) return false; const h = e.scrollHeight, end = Date.now() + %d;"
	         " window.scrollTo(0, h);"
	         " while (Date.now() < end) { await new Promise(r => setTimeout(r, 50));"
	         " if (e.scrollHeight > h) return true; } return false; })()",
	         (int)ms);
	t->scrolls++;
	t->state = TAB_SCROLLING;
	track(r, t,
	      send_tab(r, t, "Runtime.evaluate",
	               json_pack("{s:s,s:b,s:b}", "expression", expr, "returnByValue", 1,
	                         "awaitPromise", 1)),
	      now + r->opts.command_ms);
	return true;
}

/* The wait is met: scroll (--scroll) while the page grows, run --js's
 * script, take the screenshot (--screenshot), then read the DOM. */
static void settled(struct render *r, struct tab *t, double now)
{
	if (t->scrolls < r->opts.scroll && (t->scrolls == t->scrolled) && scroll_once(r, t, now))
		return;
	if (r->opts.js_expr && !t->script_ran) {
		t->script_ran = true;
		t->state = TAB_SCRIPT;
		track(r, t,
		      send_tab(r, t, "Runtime.evaluate",
		               json_pack("{s:s,s:b,s:b}", "expression", r->opts.js_expr,
		                         "returnByValue", 1, "awaitPromise", 1)),
		      now + r->opts.command_ms);
		return;
	}
	if (r->opts.screenshot && !t->shot) {
		t->shot = true;
		t->state = TAB_SHOOTING;
		track(r, t,
		      send_tab(r, t, "Page.captureScreenshot", json_pack("{s:s}", "format", "png")),
		      now + r->opts.command_ms);
		return;
	}
	read_dom(r, t, now);
}

static const char *wait_name(const struct render *r)
{
	return r->opts.wait;
}

/* The condition the page waits for. */
static void poll_wait(struct render *r, struct tab *t, double now)
{
	char *expr = NULL;
	const struct wait_spec *w = &r->wait;

	if (w->kind == WAIT_SELECTOR) {
		json_t *sel = json_string(w->arg);
		char *q = json_dumps(sel, JSON_ENCODE_ANY);
		json_decref(sel);
		if (asprintf(&expr, "document.querySelector(%s) !== null", q) < 0)
			sc_die(1, "out of memory");
		free(q);
	} else if (w->kind == WAIT_JS) {
		if (asprintf(&expr, "!!(%s)", w->arg) < 0)
			sc_die(1, "out of memory");
	} else {
		expr = sc_strdup(
		        "(() => { const s = document.documentElement ?"
		        " document.documentElement.outerHTML : ''; let h = 0;"
		        " for (let i = 0; i < s.length; i++) h = (h * 31 + s.charCodeAt(i)) | 0;"
		        " return (h >>> 0) + s.length * 4294967296; })()");
	}
	t->state = TAB_POLLING;
	track(r, t,
	      send_tab(r, t, "Runtime.evaluate",
	               json_pack("{s:s,s:b}", "expression", expr, "returnByValue", 1)),
	      now + r->opts.command_ms);
	free(expr);
}

void tab_tick(struct render *r, struct tab *t, double now)
{
	if (t->pending && now >= t->deadline) {
		if (t->state == TAB_SCRIPT) {
			/* The script's promise did not settle: the page is still
			 * there to be read. */
			char why[128];
			snprintf(why, sizeof(why), "--js: %s: did not end within %d ms", r->opts.js,
			         r->opts.command_ms);
			set_str(&t->js_error, why);
			settled(r, t, now);
			return;
		}
		if (t->state == TAB_LOADING || t->state == TAB_POLLING) {
			/* The page's time is up: what is there is the record. */
			t->timed_out = true;
			read_dom(r, t, now);
			return;
		}
		char why[128];
		snprintf(why, sizeof(why), "the browser did not answer within %d ms",
		         r->opts.command_ms);
		tab_drop(r, t, why);
		return;
	}
	if (t->state != TAB_LOADING || t->pending)
		return;
	if (now >= t->page_deadline) {
		t->timed_out = true;
		read_dom(r, t, now);
		return;
	}
	switch (r->wait.kind) {
	case WAIT_LOAD:
		if (t->loaded)
			settled(r, t, now);
		break;
	case WAIT_DCL:
		if (t->dcl)
			settled(r, t, now);
		break;
	case WAIT_IDLE:
		if (t->idle)
			settled(r, t, now);
		break;
	default:
		if (t->dcl && now >= t->next_poll)
			poll_wait(r, t, now);
		break;
	}
}

double tab_next_deadline(const struct render *r)
{
	double next = sc_now_ms() + 1000;

	for (int i = 0; i < r->opts.concurrency; i++) {
		const struct tab *t = &r->tabs[i];
		if (t->pending && t->deadline < next)
			next = t->deadline;
		if (t->state == TAB_LOADING && !t->pending) {
			if (t->page_deadline < next)
				next = t->page_deadline;
			if (r->wait.kind >= WAIT_SELECTOR && t->dcl && t->next_poll < next)
				next = t->next_poll;
		}
	}
	return next;
}

static const char *net_kind(const char *error)
{
	if (strstr(error, "NAME_NOT_RESOLVED") || strstr(error, "NAME_RESOLUTION"))
		return "dns";
	if (strstr(error, "CONNECTION_REFUSED") || strstr(error, "ADDRESS_UNREACHABLE"))
		return "connect";
	if (strstr(error, "TIMED_OUT"))
		return "timeout";
	if (strstr(error, "CERT") || strstr(error, "SSL"))
		return "tls";
	if (strstr(error, "UNKNOWN_URL_SCHEME") || strstr(error, "DISALLOWED_URL_SCHEME"))
		return "blocked_scheme";
	if (strstr(error, "TOO_MANY_REDIRECTS"))
		return "too_many_redirects";
	return "network";
}

static void page_done(struct render *r, struct tab *t, const json_t *value)
{
	struct page *p = t->page;
	const char *final = str(value, "url"), *html = str(value, "html");
	char msg[128];

	if (!t->mime && str(value, "type"))
		t->mime = sc_strdup(str(value, "type"));
	warc_page_end(r, t, final, html);
	admit_page_end(r, t);
	if (t->timed_out) {
		snprintf(msg, sizeof(msg), "the page did not settle (%s) within %d ms",
		         wait_name(r), r->opts.timeout_ms);
		record_emit(r, p, t, final, html, "timeout", msg);
	} else if (t->js_error) {
		record_emit(r, p, t, final, html, "render", t->js_error);
	} else if (t->status >= 400) {
		snprintf(msg, sizeof(msg), "HTTP %ld", t->status);
		record_emit(r, p, t, final, html, "http", msg);
	} else {
		record_emit(r, p, t, final, html, NULL, NULL);
	}
	page_free(p);
	t->page = NULL;
	t->pending = 0;
	r->in_flight--;
	t->pages++;
	if (t->pages >= r->opts.tab_pages) {
		close_target(r, t);
	} else {
		t->state = TAB_IDLE;
	}
}

/* --js's script's reply: its value, or why it failed. */
static void script_done(struct render *r, struct tab *t, const json_t *res, const json_t *err)
{
	const json_t *ex = json_object_get(res, "exceptionDetails");
	char why[512];

	if (err || ex) {
		const char *text = err ? str(err, "message") : NULL;
		if (!text)
			text = str(json_object_get(ex, "exception"), "description");
		if (!text)
			text = str(ex, "text");
		/* An exception's description is its stack: its first line says it. */
		snprintf(why, sizeof(why), "--js: %s: %.*s", r->opts.js,
		         text ? (int)strcspn(text, "\n") : 1, text ? text : "?");
		set_str(&t->js_error, why);
		return;
	}
	json_t *v = json_object_get(json_object_get(res, "result"), "value");
	t->js_result = v ? json_incref(v) : json_null();
}

static void on_reply(struct render *r, struct tab *t, const json_t *msg)
{
	const json_t *res = json_object_get(msg, "result");
	const json_t *err = json_object_get(msg, "error");
	double now = sc_now_ms();

	t->pending = 0;
	if (err && t->state != TAB_POLLING && t->state != TAB_SCROLLING && t->state != TAB_SCRIPT &&
	    t->state != TAB_COOKIES_IN && t->state != TAB_COOKIES_OUT) {
		char why[256];
		snprintf(why, sizeof(why), "the browser refused a command: %s",
		         str(err, "message") ? str(err, "message") : "?");
		tab_drop(r, t, why);
		return;
	}
	switch (t->state) {
	case TAB_CREATING:
		set_str(&t->target, str(res, "targetId"));
		t->state = TAB_ATTACHING;
		track(r, t,
		      browser_send(&r->b, NULL, "Target.attachToTarget",
		                   json_pack("{s:s,s:b}", "targetId", t->target, "flatten", 1)),
		      now + r->opts.command_ms);
		break;
	case TAB_ATTACHING:
		set_str(&t->session, str(res, "sessionId"));
		send_tab(r, t, "Page.enable", NULL);
		send_tab(r, t, "Page.setLifecycleEventsEnabled", json_pack("{s:b}", "enabled", 1));
		/* No copy of the bodies kept for Network.getResponseBody (up to
		 * 100 MB a tab by default): nothing here asks for one (--warc
		 * takes them at the Fetch domain's response stage). */
		send_tab(r, t, "Network.enable",
		         json_pack("{s:i,s:i}", "maxTotalBufferSize", 0, "maxResourceBufferSize",
		                   0));
		send_tab(r, t, "Runtime.enable", NULL);
		/* --warc: each page's exchanges, all of them, in its archive;
		 * --from-warc: each request asked of the archive. */
		if (r->warc || r->replay)
			send_tab(r, t, "Network.setCacheDisabled",
			         json_pack("{s:b}", "cacheDisabled", 1));
		if (r->agent)
			send_tab(r, t, "Network.setUserAgentOverride",
			         json_pack("{s:s}", "userAgent", r->agent));
		if (r->opts.headers)
			send_tab(r, t, "Network.setExtraHTTPHeaders",
			         json_pack("{s:O}", "headers", r->opts.headers));
		send_tab(r, t, "Emulation.setDeviceMetricsOverride",
		         json_pack("{s:i,s:i,s:i,s:b}", "width", r->opts.width, "height",
		                   r->opts.height, "deviceScaleFactor", 1, "mobile", 0));
		begin(r, t, now);
		break;
	case TAB_COOKIES_IN:
		/* Refused: the page goes without them, as the next may not. */
		navigate(r, t, now);
		break;
	case TAB_LOADING: {
		const char *e = str(res, "errorText");
		if (e && *e && strcmp(e, "net::ERR_ABORTED") != 0) {
			struct page *p = t->page;
			warc_tab_free(r, t); /* what it exchanged, no DOM */
			admit_page_end(r, t);
			/* Refused by robots.txt (or not in --from-warc's
			 * archives): never requested. */
			if (t->refused_doc)
				record_emit(r, p, t, NULL, NULL, r->replay ? "render" : "robots",
				            t->refused_doc);
			else
				record_emit(r, p, t, NULL, NULL, net_kind(e), e);
			page_free(p);
			t->page = NULL;
			r->in_flight--;
			t->pages++;
			t->state = TAB_IDLE;
		}
		break;
	}
	case TAB_POLLING: {
		const json_t *v = json_object_get(json_object_get(res, "result"), "value");
		t->state = TAB_LOADING;
		t->next_poll = now + POLL_MS;
		if (r->wait.kind == WAIT_STABLE) {
			long h = (long)json_number_value(v);
			if (h != t->stable_hash) {
				t->stable_hash = h;
				t->stable_since = now;
			} else if (now - t->stable_since >= r->wait.stable_ms) {
				settled(r, t, now);
			}
		} else if (json_is_true(v)) {
			settled(r, t, now);
		}
		break;
	}
	case TAB_SCROLLING:
		/* An error (the page navigated away) ends the scrolling too. */
		if (json_is_true(json_object_get(json_object_get(res, "result"), "value")))
			t->scrolled++;
		settled(r, t, now);
		break;
	case TAB_SCRIPT:
		script_done(r, t, res, err);
		settled(r, t, now);
		break;
	case TAB_SHOOTING: {
		const char *png = str(res, "data");
		if (png && r->opts.screenshot)
			set_str(&t->shot_path, NULL), t->shot_path = shot_write(r, t->page, png);
		warc_shot(r, t, png);
		settled(r, t, now);
		break;
	}
	case TAB_READING: {
		json_t *dom = json_object_get(json_object_get(res, "result"), "value");
		long id = cookies_after(r, t->jar);
		/* The record waits for its cookies to be kept (in the file,
		 * with --cookies). */
		t->dom = json_incref(dom);
		t->state = TAB_COOKIES_OUT;
		track(r, t, id, now + r->opts.command_ms);
		break;
	}
	case TAB_COOKIES_OUT: {
		json_t *dom = t->dom;
		t->dom = NULL;
		if (!err)
			cookies_got(r, t->jar, res);
		page_done(r, t, dom);
		json_decref(dom);
		break;
	}
	default:
		break;
	}
}

static struct tab *tab_by(struct render *r, const char *session, const char *target)
{
	for (int i = 0; i < r->opts.concurrency; i++) {
		struct tab *t = &r->tabs[i];
		if (session && t->session && strcmp(t->session, session) == 0)
			return t;
		if (target && t->target && strcmp(t->target, target) == 0)
			return t;
	}
	return NULL;
}

bool tab_answers(const struct tab *t, const json_t *params)
{
	const struct page *p = t->page;
	const char *url = str(json_object_get(params, "request"), "url");

	return p && p->body && !t->answered && url && strcmp(url, p->url) == 0;
}

/* One header field into merged: lowercased name -> [name, value]. */
static void merge(json_t *merged, const char *name, json_t *value)
{
	char *lower = sc_strdup(name);

	for (char *c = lower; *c; c++)
		*c = (char)tolower((unsigned char)*c);
	json_object_set_new(merged, lower, json_pack("[s,O]", name, value));
	free(lower);
}

/* Fetch.continueRequest's parameters: with -A or -H, the request's
 * headers with them put in (the network stack puts its own default
 * User-Agent on a page's fetch() otherwise, whatever the override). */
static json_t *continued(const struct render *r, const json_t *params, const struct page *p)
{
	json_t *c = json_pack("{s:s}", "requestId", str(params, "requestId"));
	const json_t *have = json_object_get(json_object_get(params, "request"), "headers");
	const char *k;
	json_t *v;

	if (p) {
		/* The document of a record's "request": its method and body. */
		if (p->method)
			json_object_set_new(c, "method", json_string(p->method));
		if (p->post) {
			char *b64 = sc_malloc((p->post_len + 2) / 3 * 4 + 1);
			b64[sc_base64_encode((const unsigned char *)p->post, p->post_len, b64)] =
			        '\0';
			json_object_set_new(c, "postData", json_string(b64));
			free(b64);
		}
	}
	if (!r->agent && !r->opts.headers && !(p && p->req_headers))
		return c;
	/* By lowercased name: each later one replaces a field of its name,
	 * whatever its case (the request's, -A, -H, then the record's). */
	json_t *merged = json_object(), *list = json_array();
	json_object_foreach((json_t *)have, k, v)
	{
		merge(merged, k, v);
	}
	if (r->agent) {
		json_t *ua = json_string(r->agent);
		merge(merged, "User-Agent", ua);
		json_decref(ua);
	}
	json_object_foreach(r->opts.headers, k, v)
	{
		merge(merged, k, v);
	}
	json_object_foreach(p ? p->req_headers : NULL, k, v)
	{
		merge(merged, k, v);
	}
	json_object_foreach(merged, k, v)
	{
		json_array_append_new(list, json_pack("{s:O,s:O}", "name", json_array_get(v, 0),
		                                      "value", json_array_get(v, 1)));
	}
	json_decref(merged);
	json_object_set_new(c, "headers", list);
	return c;
}

void tab_proceed(struct render *r, struct tab *t, const json_t *params)
{
	struct page *p = t->page;
	const char *id = str(params, "requestId");

	if (!tab_answers(t, params)) {
		const char *url = str(json_object_get(params, "request"), "url");
		if (p && page_overrides(p) && !t->answered && url && strcmp(url, p->url) == 0) {
			/* Once: a redirect after the POST is the browser's GET. */
			t->answered = true;
			send_tab(r, t, "Fetch.continueRequest", continued(r, params, p));
			return;
		}
		if (r->replay)
			replay_paused(r, t, params);
		else
			send_tab(r, t, "Fetch.continueRequest", continued(r, params, NULL));
		return;
	}
	t->answered = true;
	char *b64 = sc_malloc((p->body_len + 2) / 3 * 4 + 1);
	b64[sc_base64_encode((const unsigned char *)p->body, p->body_len, b64)] = '\0';
	send_tab(r, t, "Fetch.fulfillRequest",
	         json_pack("{s:s,s:i,s:[{s:s,s:s}],s:s}", "requestId", id, "responseCode",
	                   p->status > 0 ? (int)p->status : 200, "responseHeaders", "name",
	                   "Content-Type", "value", p->content_type ? p->content_type : "text/html",
	                   "body", b64));
	free(b64);
}

/* Counts the request an event names, once: Chromium does not always send
 * Network.requestWillBeSent (a fetch() answered early was seen with only
 * its responseReceived and loadingFinished), so every event that names a
 * request counts it the first time. */
static void count_request(struct tab *t, const json_t *params)
{
	const char *id = str(params, "requestId");

	if (!id)
		return;
	if (!t->request_ids)
		t->request_ids = json_object();
	if (json_object_get(t->request_ids, id))
		return;
	json_object_set_new(t->request_ids, id, json_true());
	t->requests++;
}

/* Whether a paused request is the tab's page before this one (a fetch() its
 * script began, whose pause came after that page's record): it is failed,
 * neither counted nor listed as missing in this page's record.  Nothing of
 * a page comes before its main document. */
static bool stale_pause(struct render *r, struct tab *t, const json_t *params)
{
	const char *type = str(params, "resourceType"), *frame = str(params, "frameId");

	if (type && strcmp(type, "Document") == 0 && frame && t->target &&
	    strcmp(frame, t->target) == 0)
		t->doc_paused = true;
	if (t->doc_paused)
		return false;
	send_tab(r, t, "Fetch.failRequest",
	         json_pack("{s:s?,s:s}", "requestId", str(params, "requestId"), "errorReason",
	                   "Aborted"));
	return true;
}

static void on_event(struct render *r, struct tab *t, const char *method, const json_t *params)
{
	/* Every request is paused when admit.c intercepts them all: counted
	 * there, before it leaves (a Network event may come after the
	 * record). */
	if (strncmp(method, "Network.", 8) == 0 && !admit_intercepts(r))
		count_request(t, params);
	warc_event(r, t, method, params);
	if (strcmp(method, "Page.lifecycleEvent") == 0) {
		/* Only the events of the document this page's navigation loads
		 * (the tab's about:blank sends its own late). */
		const char *name = str(params, "name"), *loader = str(params, "loaderId");
		if (!name || !loader || !t->loader || strcmp(loader, t->loader) != 0)
			return;
		if (strcmp(name, "DOMContentLoaded") == 0)
			t->dcl = true;
		else if (strcmp(name, "load") == 0)
			t->loaded = t->dcl = true;
		else if (strcmp(name, "networkIdle") == 0)
			t->idle = true;
		/* The document is parsed, so its body has all come: its
		 * --per-host slot is free, whether or not its loadingFinished
		 * comes (in one run of three with two tabs, it never did). */
		if (t->dcl && t->doc_request)
			admit_finished(r, t, t->doc_request);
	} else if (strcmp(method, "Network.requestWillBeSent") == 0) {
		const char *type = str(params, "type"), *frame = str(params, "frameId");
		admit_named(r, t, str(params, "requestId"),
		            str(json_object_get(params, "request"), "url"));
		if (type && strcmp(type, "Document") == 0 && frame && t->target &&
		    strcmp(frame, t->target) == 0) {
			/* The main frame's document (again after a redirect or a
			 * script's navigation): its events are the ones waited for. */
			set_str(&t->doc_request, str(params, "requestId"));
			if (!t->loader || !str(params, "loaderId") ||
			    strcmp(t->loader, str(params, "loaderId")) != 0) {
				set_str(&t->loader, str(params, "loaderId"));
				t->loaded = t->dcl = t->idle = false;
			}
		}
	} else if (strcmp(method, "Network.responseReceived") == 0) {
		const char *id = str(params, "requestId");
		const json_t *resp = json_object_get(params, "response");
		/* A request whose requestWillBeSent never came (a fetch() paused
		 * before it: seen in one tab of two) is named by its response, so
		 * that its loadingFinished frees its --per-host slot. */
		admit_named(r, t, id, str(resp, "url"));
		if (id && t->doc_request && strcmp(id, t->doc_request) == 0) {
			t->status = (long)json_integer_value(json_object_get(resp, "status"));
			set_str(&t->mime, str(resp, "mimeType"));
		}
	} else if (strcmp(method, "Network.loadingFinished") == 0) {
		admit_finished(r, t, str(params, "requestId"));
	} else if (strcmp(method, "Network.loadingFailed") == 0) {
		admit_finished(r, t, str(params, "requestId"));
		/* Blocked by admit.c ("inspector": counted then), by the
		 * browser (CSP, mixed content, ...), or failed. */
		const char *why = str(params, "blockedReason");
		if (why && strcmp(why, "inspector") == 0 && admit_intercepts(r))
			return;
		/* --from-warc's refusal of what it lacks: counted at its pause. */
		const char *text = str(params, "errorText");
		if (r->replay && text && strstr(text, "INTERNET_DISCONNECTED"))
			return;
		if (why)
			t->blocked++;
		else
			t->failed++;
	} else if (strcmp(method, "Runtime.consoleAPICalled") == 0) {
		if (str(params, "type") && strcmp(str(params, "type"), "error") == 0)
			t->console_errors++;
	} else if (strcmp(method, "Runtime.exceptionThrown") == 0) {
		t->console_errors++;
	} else if (strcmp(method, "Page.javascriptDialogOpening") == 0) {
		/* Dismissed at once, but a beforeunload accepted: the tab may
		 * leave the page for the next one. */
		const char *type = str(params, "type");
		t->dialogs++;
		send_tab(r, t, "Page.handleJavaScriptDialog",
		         json_pack("{s:b}", "accept", type && strcmp(type, "beforeunload") == 0));
	} else if (strcmp(method, "Fetch.requestPaused") == 0) {
		if (warc_paused(r, t, params))
			return; /* the response stage: its body archived */
		if (stale_pause(r, t, params))
			return;
		if (admit_intercepts(r))
			count_request(t, params);
		admit_paused(r, t, params);
	} else if (strcmp(method, "Inspector.targetCrashed") == 0) {
		tab_drop(r, t, "the tab crashed");
	}
}

void tab_on_message(struct render *r, json_t *msg)
{
	const char *session = str(msg, "sessionId"), *method = str(msg, "method");
	const json_t *params = json_object_get(msg, "params");
	json_t *id = json_object_get(msg, "id");

	if (json_is_integer(id)) {
		long n = (long)json_integer_value(id);
		if (warc_reply(r, n, msg))
			return;
		const struct jar *j = jar_reply(r, n, msg);
		if (j) {
			context_made(r, j, msg);
			return;
		}
		for (int i = 0; i < r->opts.concurrency; i++)
			if (r->tabs[i].pending == n) {
				on_reply(r, &r->tabs[i], msg);
				return;
			}
		return;
	}
	if (!method)
		return;
	if (!session) {
		struct tab *t = NULL;
		if (strcmp(method, "Target.targetCrashed") == 0)
			t = tab_by(r, NULL, str(params, "targetId"));
		else if (strcmp(method, "Target.detachedFromTarget") == 0)
			t = tab_by(r, str(params, "sessionId"), NULL);
		if (t && t->page)
			tab_drop(r, t, "the tab crashed");
		return;
	}
	struct tab *t = tab_by(r, session, NULL);
	if (t && t->page)
		on_event(r, t, method, params);
}
