/*
 * sc-testserver — the fixture HTTP/1.1 server behind every sc test and demo.
 *
 * One thread, one epoll loop, non-blocking sockets, keep-alive and
 * pipelining.  Anything that has to wait (delays, slow drips, lingering
 * closes, the pause before a deliberate RST) is a per-connection timer in a
 * min-heap, so a thousand sleeping requests cost memory and nothing else.
 * Large bodies are generated on demand as the socket drains, never buffered
 * whole.  Links nothing but libc: the gzip endpoint uses deflate "stored"
 * blocks and a hand-written CRC-32, the br endpoint brotli's uncompressed
 * meta-blocks.
 *
 * The endpoints are listed in usage() and dispatched in route_request().
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------------ */
/* Limits                                                              */
/* ------------------------------------------------------------------ */

#define MAX_HEAD_BYTES (64 * 1024) /* request line + headers */
#define MAX_HEADERS 128
#define MAX_BODY_BYTES (16 * 1024 * 1024)
#define MAX_CHUNK_LINE 4096 /* chunk-size line or trailer line */
#define MAX_TRAILER_LINES 64
/* Stop reading from a connection once this much unprocessed input piles
 * up (only possible while a response is pending and the client keeps
 * pipelining); reading resumes as the backlog is consumed. */
#define MAX_INPUT_BACKLOG (MAX_HEAD_BYTES + MAX_BODY_BYTES + 1024 * 1024)
#define READ_CHUNK (16 * 1024)
#define READS_PER_EVENT 16
#define STREAM_CHUNK (64 * 1024) /* generated body bytes per refill */
#define SENDS_PER_EVENT 32       /* fairness: yield after ~2 MB */
#define ACCEPTS_PER_EVENT 1024
#define LISTEN_BACKLOG 4096
#define LOG_CAPACITY 100000
#define LINGER_MS 2000    /* drain input before closing */
#define RESET_PAUSE_MS 50 /* let partial body reach the peer */
#define MAX_DELAY_MS (3600 * 1000)
#define MAX_GENERATED_BYTES (64ull * 1024 * 1024) /* in-memory bodies */
#define MAX_STREAM_BYTES (1ull << 40)             /* streamed bodies */
#define MAX_ROOT_FILE_BYTES (256ull * 1024 * 1024)
#define NO_TIMER SIZE_MAX

/* 64 printable bytes; byte i of every text body is TEXT_PATTERN[i % 64],
 * so any range of it can be produced without keeping state. */
static const char TEXT_PATTERN[64] =
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-\n";

/* ------------------------------------------------------------------ */
/* Small utilities                                                     */
/* ------------------------------------------------------------------ */

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("sc-testserver: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(1);
}

static void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		die("out of memory");
	return q;
}

static void *xcalloc(size_t count, size_t size)
{
	void *p = calloc(count ? count : 1, size ? size : 1);
	if (!p)
		die("out of memory");
	return p;
}

static char *xstrndup(const char *s, size_t n)
{
	char *p = strndup(s, n);
	if (!p)
		die("out of memory");
	return p;
}

static char *xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

static int64_t clock_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static size_t min_size(size_t a, size_t b)
{
	return a < b ? a : b;
}

/* Strict unsigned decimal: digits only, no sign, no overflow. */
static bool parse_u64(const char *s, size_t len, uint64_t *out)
{
	if (len == 0 || len > 20)
		return false;
	uint64_t v = 0;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		unsigned d = (unsigned)(s[i] - '0');
		if (v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*out = v;
	return true;
}

static bool parse_u64_str(const char *s, uint64_t *out)
{
	return s && parse_u64(s, strlen(s), out);
}

/* RFC 7231 IMF-fixdate, locale-independent. */
static void format_http_date(time_t t, char out[40])
{
	static const char *const days[] = { "Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat" };
	static const char *const months[] = { "Jan", "Feb", "Mar", "Apr", "May", "Jun",
		                              "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };
	struct tm tm;
	gmtime_r(&t, &tm);
	snprintf(out, 40, "%s, %02d %s %04d %02d:%02d:%02d GMT", days[tm.tm_wday % 7], tm.tm_mday,
	         months[tm.tm_mon % 12], tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

/* ------------------------------------------------------------------ */
/* Growable byte buffer                                                */
/* ------------------------------------------------------------------ */

/* data (once allocated) always holds a NUL after its len bytes, so text
 * buffers double as C strings. */
typedef struct {
	char *data;
	size_t len, cap;
} buf_t;

/* Room for `extra` more bytes plus the NUL kept after the contents. */
static void buf_reserve(buf_t *b, size_t extra)
{
	if (b->len + extra < b->cap)
		return;
	size_t cap = b->cap ? b->cap : 256;
	while (cap <= b->len + extra)
		cap *= 2;
	b->data = xrealloc(b->data, cap);
	b->cap = cap;
}

static void buf_append(buf_t *b, const void *p, size_t n)
{
	if (n == 0)
		return;
	buf_reserve(b, n);
	memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
}

static void buf_puts(buf_t *b, const char *s)
{
	buf_append(b, s, strlen(s));
}

static void buf_putc(buf_t *b, char ch)
{
	buf_append(b, &ch, 1);
}

static void buf_printf(buf_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void buf_printf(buf_t *b, const char *fmt, ...)
{
	/* Format straight into the spare capacity; grow and redo if short. */
	buf_reserve(b, 128);
	for (int attempt = 0; attempt < 2; attempt++) {
		size_t room = b->cap - b->len;
		va_list ap;
		va_start(ap, fmt);
		int n = vsnprintf(b->data + b->len, room, fmt, ap);
		va_end(ap);
		if (n < 0)
			return;
		if ((size_t)n < room) {
			b->len += (size_t)n;
			return;
		}
		buf_reserve(b, (size_t)n + 1);
	}
}

static void buf_free(buf_t *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

/* Appends `n` bytes of the text pattern, as if starting at body offset `offset`. */
static void buf_append_pattern(buf_t *b, uint64_t offset, size_t n)
{
	buf_reserve(b, n);
	size_t done = 0;
	while (done < n) {
		size_t pos = (size_t)((offset + done) % sizeof TEXT_PATTERN);
		size_t take = min_size(sizeof TEXT_PATTERN - pos, n - done);
		memcpy(b->data + b->len + done, TEXT_PATTERN + pos, take);
		done += take;
	}
	b->len += n;
	b->data[b->len] = '\0';
}

/* Bytes that are never valid UTF-8 anywhere in a sequence. */
static void buf_append_binary(buf_t *b, uint64_t offset, size_t n)
{
	static const unsigned char pattern[8] = { 0xff, 0xfe, 0xc0, 0x80, 0xf8, 0xc1, 0xfd, 0x81 };
	buf_reserve(b, n);
	for (size_t i = 0; i < n; i++)
		b->data[b->len + i] = (char)pattern[(offset + i) % sizeof pattern];
	b->len += n;
	b->data[b->len] = '\0';
}

/* ------------------------------------------------------------------ */
/* JSON and HTML escaping                                              */
/* ------------------------------------------------------------------ */

/* Length of the well-formed UTF-8 sequence at s (1..4), or 0 if invalid. */
static size_t utf8_sequence_length(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	size_t len;
	uint32_t min_cp, cp;
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2, min_cp = 0x80, cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3, min_cp = 0x800, cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4, min_cp = 0x10000, cp = c & 0x07;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if (cp < min_cp || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

/* Appends a JSON string literal.  Valid UTF-8 passes through; bytes that
 * are not part of valid UTF-8 are escaped as \u00XX (read as Latin-1) so
 * the output is always valid JSON. */
static void json_string_n(buf_t *b, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	buf_reserve(b, n + 2);
	buf_putc(b, '"');
	size_t i = 0;
	while (i < n) {
		unsigned char c = u[i];
		if (c == '"' || c == '\\') {
			buf_putc(b, '\\');
			buf_putc(b, (char)c);
			i++;
		} else if (c == '\n') {
			buf_puts(b, "\\n"), i++;
		} else if (c == '\r') {
			buf_puts(b, "\\r"), i++;
		} else if (c == '\t') {
			buf_puts(b, "\\t"), i++;
		} else if (c < 0x20 || c == 0x7f) {
			buf_printf(b, "\\u%04x", c), i++;
		} else if (c < 0x80) {
			buf_putc(b, (char)c), i++;
		} else {
			size_t len = utf8_sequence_length(u + i, n - i);
			if (len == 0) {
				buf_printf(b, "\\u%04x", c);
				i++;
			} else {
				buf_append(b, u + i, len);
				i += len;
			}
		}
	}
	buf_putc(b, '"');
}

static void json_string(buf_t *b, const char *s)
{
	json_string_n(b, s ? s : "", s ? strlen(s) : 0);
}

static void html_escape(buf_t *b, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<':
			buf_puts(b, "&lt;");
			break;
		case '>':
			buf_puts(b, "&gt;");
			break;
		case '&':
			buf_puts(b, "&amp;");
			break;
		case '"':
			buf_puts(b, "&quot;");
			break;
		default:
			buf_putc(b, *s);
		}
	}
}

/* ------------------------------------------------------------------ */
/* CRC-32 and gzip with stored deflate blocks                          */
/* ------------------------------------------------------------------ */

static uint32_t crc32_table[256];

static void crc32_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
		crc32_table[i] = c;
	}
}

static uint32_t crc32_compute(const unsigned char *p, size_t n)
{
	uint32_t c = 0xffffffffu;
	for (size_t i = 0; i < n; i++)
		c = crc32_table[(c ^ p[i]) & 0xff] ^ (c >> 8);
	return c ^ 0xffffffffu;
}

static void put_le32(buf_t *b, uint32_t v)
{
	unsigned char bytes[4] = { (unsigned char)v, (unsigned char)(v >> 8),
		                   (unsigned char)(v >> 16), (unsigned char)(v >> 24) };
	buf_append(b, bytes, 4);
}

/* RFC 1952 member whose deflate stream (RFC 1951) is only stored blocks. */
static void gzip_stored(buf_t *out, const unsigned char *data, size_t len)
{
	static const unsigned char header[10] = { 0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff };
	buf_append(out, header, sizeof header);
	size_t off = 0;
	do {
		size_t n = min_size(len - off, 65535);
		bool final = off + n == len;
		uint16_t nlen = (uint16_t)~n;
		unsigned char block[5] = { final ? 1 : 0, (unsigned char)n, (unsigned char)(n >> 8),
			                   (unsigned char)nlen, (unsigned char)(nlen >> 8) };
		buf_append(out, block, sizeof block);
		buf_append(out, data + off, n);
		off += n;
	} while (off < len);
	put_le32(out, crc32_compute(data, len));
	put_le32(out, (uint32_t)len);
}

/* RFC 7932 stream of uncompressed meta-blocks (a 64 KiB window): each a
 * 20-bit header (ISLAST 0, MNIBBLES 4, MLEN-1, ISUNCOMPRESSED 1) padded to
 * a byte, the first after the WBITS bit, then the bytes; an empty last
 * meta-block ends it. */
static void brotli_stored(buf_t *out, const unsigned char *data, size_t len)
{
	bool first = true;
	for (size_t off = 0; off < len; first = false) {
		size_t n = min_size(len - off, 65536);
		uint32_t bits = (uint32_t)(n - 1) << 3 | 1u << 19;
		if (first)
			bits <<= 1; /* WBITS: a 0 bit, window 2^16 - 16 */
		unsigned char header[3] = { (unsigned char)bits, (unsigned char)(bits >> 8),
			                    (unsigned char)(bits >> 16) };
		buf_append(out, header, sizeof header);
		buf_append(out, data + off, n);
		off += n;
	}
	/* ISLAST and ISLASTEMPTY (after the WBITS bit when nothing came) */
	unsigned char last = len == 0 ? 0x06 : 0x03;
	buf_append(out, &last, 1);
}

/* RFC 8878 frame of raw blocks: the magic number, a frame header of one
 * descriptor byte (single segment, an 8-byte content size, no checksum)
 * and the size, then blocks of at most 128 KiB, each a 3-byte header
 * (Last_Block, Block_Type 0 raw, Block_Size) and its bytes. */
static void zstd_stored(buf_t *out, const unsigned char *data, size_t len)
{
	static const unsigned char magic[5] = { 0x28, 0xb5, 0x2f, 0xfd, 0xe0 };
	buf_append(out, magic, sizeof magic);
	put_le32(out, (uint32_t)len);
	put_le32(out, (uint32_t)((uint64_t)len >> 32));
	size_t off = 0;
	do {
		size_t n = min_size(len - off, 128 * 1024);
		uint32_t h = (uint32_t)n << 3 | (off + n == len ? 1u : 0u);
		unsigned char header[3] = { (unsigned char)h, (unsigned char)(h >> 8),
			                    (unsigned char)(h >> 16) };
		buf_append(out, header, sizeof header);
		buf_append(out, data + off, n);
		off += n;
	} while (off < len);
}

/* ------------------------------------------------------------------ */
/* String -> int64 hash map (path counters, flaky and ratelimit state) */
/* ------------------------------------------------------------------ */

typedef struct {
	char *key;
	int64_t value;
} strmap_slot_t;

typedef struct {
	strmap_slot_t *slots;
	size_t cap, count; /* cap is a power of two */
} strmap_t;

static uint64_t hash_string(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ull;
	}
	return h;
}

/* The slot holding key, or the empty slot where it belongs.  The table
 * is never full (load factor <= 0.7), so the probe always terminates. */
static strmap_slot_t *strmap_probe(strmap_slot_t *slots, size_t cap, const char *key)
{
	size_t i = (size_t)hash_string(key) & (cap - 1);
	for (size_t n = 0; n < cap; n++) {
		if (!slots[i].key || strcmp(slots[i].key, key) == 0)
			return &slots[i];
		i = (i + 1) & (cap - 1);
	}
	die("hash map full");
}

static void strmap_grow(strmap_t *m)
{
	size_t cap = m->cap ? m->cap * 2 : 64;
	strmap_slot_t *slots = xcalloc(cap, sizeof *slots);
	for (size_t i = 0; i < m->cap; i++)
		if (m->slots[i].key)
			*strmap_probe(slots, cap, m->slots[i].key) = m->slots[i];
	free(m->slots);
	m->slots = slots;
	m->cap = cap;
}

/* Pointer to key's value, inserting it with value 0 if absent. */
static int64_t *strmap_value(strmap_t *m, const char *key, bool *inserted)
{
	if ((m->count + 1) * 10 > m->cap * 7)
		strmap_grow(m);
	strmap_slot_t *slot = strmap_probe(m->slots, m->cap, key);
	*inserted = !slot->key;
	if (!slot->key) {
		slot->key = xstrdup(key);
		slot->value = 0;
		m->count++;
	}
	return &slot->value;
}

static void strmap_clear(strmap_t *m)
{
	for (size_t i = 0; i < m->cap; i++)
		free(m->slots[i].key);
	free(m->slots);
	m->slots = NULL;
	m->cap = m->count = 0;
}

/* ------------------------------------------------------------------ */
/* Global state: statistics and the request log                        */
/* ------------------------------------------------------------------ */

static struct {
	int64_t connections, max_connections;
	int64_t inflight, max_inflight;
	int64_t requests;
	strmap_t paths;             /* path (no query) -> count */
	strmap_t flaky;             /* flaky ID -> requests seen */
	strmap_t ratelimit;         /* ratelimit ID -> window end, ns on the monotonic clock */
	strmap_t host_inflight;     /* Host header -> requests in flight now */
	strmap_t host_max_inflight; /* Host header -> most in flight at once */
	strmap_t unreliable;        /* "Host ID" of /unreliable -> requests seen */
	strmap_t crowded;           /* Host header -> last /crowded arrival, ns */
} stats;

/* /bucket/ID: a token bucket per ID, for the pace controller's tests. */
#define MAX_BUCKETS 64
typedef struct {
	char id[64];
	double rate, burst;         /* tokens per second, bucket size */
	double tokens;              /* now */
	int64_t tokens_at_ns;       /* when tokens was computed */
	int64_t retry_given_ns;     /* when the last Retry-After was given */
	int64_t retry_until_ns;     /* and when it ends */
	int64_t ok, refused, early; /* early: see handle_bucket */
} bucket_t;
static bucket_t buckets[MAX_BUCKETS];
static size_t bucket_count;

typedef struct {
	double t_ms; /* when the request's first bytes reached the kernel */
	char *host, *method, *target, *agent;
	char *header_names; /* the request's header names, in order, as a JSON array */
	int status;         /* 0 until the response status is known (e.g. /hang) */
} log_entry_t;

/* Ring of the most recent requests; live sequence numbers are
 * [log_first, log_next), entry seq lives at log_ring[seq % LOG_CAPACITY].
 * Sequence numbers never restart, so a connection holding the number of
 * an entry dropped by /stats/reset cannot touch a newer one. */
static log_entry_t *log_ring;
static uint64_t log_first, log_next;
static int64_t server_start_ns;

static void log_entry_free(log_entry_t *e)
{
	free(e->host);
	free(e->method);
	free(e->target);
	free(e->agent);
	free(e->header_names);
	memset(e, 0, sizeof *e);
}

/* at_ns: when the request arrived (clock_ns's clock), or 0 for now.
 * header_names (malloced) is the entry's. */
static uint64_t log_append(int64_t at_ns, const char *host, const char *method, const char *target,
                           const char *agent, char *header_names)
{
	if (!log_ring)
		log_ring = xcalloc(LOG_CAPACITY, sizeof *log_ring);
	if (log_next - log_first == LOG_CAPACITY)
		log_entry_free(&log_ring[log_first++ % LOG_CAPACITY]);
	log_entry_t *e = &log_ring[log_next % LOG_CAPACITY];
	e->t_ms = (double)((at_ns ? at_ns : clock_ns()) - server_start_ns) / 1e6;
	e->host = xstrdup(host ? host : "");
	e->method = xstrdup(method);
	e->target = xstrdup(target);
	e->agent = xstrdup(agent ? agent : "");
	e->header_names = header_names;
	e->status = 0;
	return log_next++;
}

static void log_set_status(uint64_t seq, int status)
{
	if (log_ring && seq >= log_first && seq < log_next)
		log_ring[seq % LOG_CAPACITY].status = status;
}

static void log_clear(void)
{
	for (uint64_t seq = log_first; seq < log_next; seq++)
		log_entry_free(&log_ring[seq % LOG_CAPACITY]);
	log_first = log_next;
}

/* ------------------------------------------------------------------ */
/* Connections and requests                                            */
/* ------------------------------------------------------------------ */

enum phase {
	PHASE_HEAD,    /* waiting for a complete request head */
	PHASE_BODY,    /* head parsed, collecting the body */
	PHASE_RESPOND, /* request dispatched, response not finished */
	PHASE_CLOSING, /* discarding input until the close timer or EOF */
};

enum timer_kind {
	TIMER_NONE,
	TIMER_DELAY,  /* /delay: send the response when it fires */
	TIMER_DRIP,   /* /slow: send one more body byte */
	TIMER_RESET,  /* /reset: abort the connection with RST */
	TIMER_LINGER, /* give up waiting for the peer's FIN */
	TIMER_ROBOTS, /* --robots-dir: answer /robots.txt when it fires */
};

enum generator {
	GEN_NONE,
	GEN_TEXT,
	GEN_BINARY
};

enum chunk_state {
	CHUNK_SIZE,
	CHUNK_DATA,
	CHUNK_DATA_END,
	CHUNK_TRAILER
};

typedef struct {
	const char *name, *value;
} header_t;

typedef struct {
	char *head; /* copy of the head, split in place into the strings below */
	const char *method;
	char *path, *query, *target; /* target = path[?query], no fragment */
	header_t headers[MAX_HEADERS];
	int header_count;
	int version_minor;
	bool keep_alive, is_head, expect_continue, chunked;
	uint64_t content_length;
	buf_t body;
	enum chunk_state chunk_state;
	uint64_t chunk_left;
	unsigned trailer_lines;
} request_t;

typedef struct conn conn_t;
struct conn {
	buf_t in;
	size_t in_start;    /* consumed prefix of in */
	int64_t head_rx_ns; /* when the kernel received the bytes that began the
	                       latest request (recv_stamped); 0: unknown */
	buf_t out;
	size_t out_sent; /* sent prefix of out */
	request_t req;
	char *inflight_host; /* NULL or malloced: its key in stats.host_inflight */
	uint64_t log_seq;    /* this request's log entry, when logged */

	/* Streamed body: gen_total bytes (chunked or not) from gen_offset on. */
	uint64_t gen_offset, gen_total;

	/* /slow */
	uint64_t drip_left, drip_offset;
	int64_t drip_interval_ms;
	/* /delay */
	int64_t delay_ms;

	int64_t timer_due_ns;
	size_t timer_index; /* position in the timer heap, or NO_TIMER */

	conn_t *prev, *next; /* list of live connections */

	int fd;
	uint32_t events; /* current epoll interest */
	enum phase phase;
	enum generator gen;
	enum timer_kind timer_kind;

	/* Flags, together so that the struct packs. */
	bool dead;
	bool peer_closed;
	bool counted;     /* included in stats.connections */
	bool inflight;    /* included in stats.inflight */
	bool logged;      /* log_seq is this request's log entry */
	bool close_after; /* close once the current response is sent */
	bool reset_after; /* ... and do it with an RST */
	bool hang;        /* never answer this request */
	bool gen_chunked;
};

static int epoll_fd = -1;
/* listen_fds[0] is 127.0.0.1; --loopback N adds 127.0.0.2 ... 127.0.0.N on
 * the same port, each a separate origin for multi-host crawls. */
#define MAX_LISTENERS 32
static int listen_fds[MAX_LISTENERS];
static int listen_count;
static int listen_port;
static int reserve_fd = -1; /* spare fd, sacrificed to shed connections on EMFILE */
static const char *root_dir;
static conn_t *live_conns;
static conn_t *graveyard; /* killed this loop iteration, freed after it */

/* epoll data.ptr tags for the non-connection descriptors */
static int signal_tag;

/* ------------------------------------------------------------------ */
/* Timer heap                                                          */
/* ------------------------------------------------------------------ */

static conn_t **timer_heap;
static size_t timer_count, timer_cap;

static bool timer_before(size_t a, size_t b)
{
	return timer_heap[a]->timer_due_ns < timer_heap[b]->timer_due_ns;
}

static void timer_swap(size_t a, size_t b)
{
	conn_t *t = timer_heap[a];
	timer_heap[a] = timer_heap[b];
	timer_heap[b] = t;
	timer_heap[a]->timer_index = a;
	timer_heap[b]->timer_index = b;
}

static void timer_sift_up(size_t i)
{
	while (i > 0) {
		size_t parent = (i - 1) / 2;
		if (!timer_before(i, parent))
			break;
		timer_swap(i, parent);
		i = parent;
	}
}

static void timer_sift_down(size_t i)
{
	for (;;) {
		size_t left = 2 * i + 1, right = left + 1, least = i;
		if (left < timer_count && timer_before(left, least))
			least = left;
		if (right < timer_count && timer_before(right, least))
			least = right;
		if (least == i)
			break;
		timer_swap(i, least);
		i = least;
	}
}

static void timer_cancel(conn_t *c)
{
	c->timer_kind = TIMER_NONE;
	if (c->timer_index == NO_TIMER)
		return;
	size_t i = c->timer_index, last = --timer_count;
	c->timer_index = NO_TIMER;
	if (i != last) {
		timer_heap[i] = timer_heap[last];
		timer_heap[i]->timer_index = i;
		/* the moved entry may belong above or below its new spot */
		timer_sift_down(i);
		timer_sift_up(i);
	}
}

static void timer_arm(conn_t *c, enum timer_kind kind, int64_t delay_ms)
{
	timer_cancel(c);
	if (timer_count == timer_cap) {
		timer_cap = timer_cap ? timer_cap * 2 : 64;
		timer_heap = xrealloc(timer_heap, timer_cap * sizeof(conn_t *));
	}
	c->timer_kind = kind;
	c->timer_due_ns = clock_ns() + delay_ms * 1000000;
	c->timer_index = timer_count;
	timer_heap[timer_count++] = c;
	timer_sift_up(c->timer_index);
}

/* epoll_wait timeout in ms until the earliest timer, rounded up. */
static int timer_wait_ms(void)
{
	if (timer_count == 0)
		return -1;
	int64_t wait_ns = timer_heap[0]->timer_due_ns - clock_ns();
	if (wait_ns <= 0)
		return 0;
	int64_t ms = (wait_ns + 999999) / 1000000;
	return ms > INT_MAX ? INT_MAX : (int)ms;
}

/* ------------------------------------------------------------------ */
/* Connection lifecycle                                                */
/* ------------------------------------------------------------------ */

static void request_free(request_t *r)
{
	free(r->head);
	free(r->path);
	free(r->query);
	free(r->target);
	buf_free(&r->body);
	memset(r, 0, sizeof *r);
}

/* Leave "in flight" state: the request got its whole response or died. */
static void conn_end_inflight(conn_t *c)
{
	if (c->inflight) {
		c->inflight = false;
		stats.inflight--;
	}
	if (c->inflight_host) {
		bool inserted;
		--*strmap_value(&stats.host_inflight, c->inflight_host, &inserted);
		free(c->inflight_host);
		c->inflight_host = NULL;
	}
}

static void conn_count(conn_t *c)
{
	if (!c->counted) {
		c->counted = true;
		if (++stats.connections > stats.max_connections)
			stats.max_connections = stats.connections;
	}
}

static void conn_uncount(conn_t *c)
{
	if (c->counted) {
		c->counted = false;
		stats.connections--;
	}
}

/* Closes the socket and settles all accounting now; the memory is freed
 * after the current loop iteration so callers up the stack stay safe. */
static void conn_kill(conn_t *c, bool with_rst)
{
	if (c->dead)
		return;
	c->dead = true;
	timer_cancel(c);
	if (with_rst) {
		struct linger lg = { .l_onoff = 1, .l_linger = 0 };
		setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
	}
	epoll_ctl(epoll_fd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	c->fd = -1;
	conn_uncount(c);
	conn_end_inflight(c);
	if (c->prev)
		c->prev->next = c->next;
	else
		live_conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	c->prev = NULL;
	c->next = graveyard;
	graveyard = c;
}

static void conn_free(conn_t *c)
{
	request_free(&c->req);
	buf_free(&c->in);
	buf_free(&c->out);
	free(c);
}

static void free_graveyard(void)
{
	while (graveyard) {
		conn_t *c = graveyard;
		graveyard = c->next;
		conn_free(c);
	}
}

static size_t conn_input_available(const conn_t *c)
{
	return c->in.len - c->in_start;
}

/* The unconsumed input; never NULL, even before the first read. */
static const char *conn_input(const conn_t *c)
{
	return c->in.data ? c->in.data + c->in_start : "";
}

static size_t conn_output_pending(const conn_t *c)
{
	return c->out.len - c->out_sent;
}

static void conn_consume_input(conn_t *c, size_t n)
{
	c->in_start += n;
	if (c->in_start == c->in.len) {
		c->in_start = c->in.len = 0;
		if (c->in.cap > 256 * 1024)
			buf_free(&c->in); /* don't keep a 16 MB body's buffer around */
	}
}

static void conn_update_interest(conn_t *c)
{
	if (c->dead)
		return;
	uint32_t events = 0;
	if (!c->peer_closed && conn_input_available(c) < MAX_INPUT_BACKLOG)
		events |= EPOLLIN;
	if (conn_output_pending(c) > 0 || c->gen != GEN_NONE)
		events |= EPOLLOUT;
	if (events == c->events)
		return;
	struct epoll_event ev = { .events = events, .data.ptr = c };
	if (epoll_ctl(epoll_fd, EPOLL_CTL_MOD, c->fd, &ev) == 0)
		c->events = events;
	else
		conn_kill(c, false);
}

/* After a response with "Connection: close": half-close and drain input
 * until the peer closes, so unread request bytes don't turn our close into
 * an RST that could destroy the response before the client reads it. */
static void conn_start_closing(conn_t *c)
{
	c->phase = PHASE_CLOSING;
	if (c->peer_closed) {
		conn_kill(c, false);
		return;
	}
	shutdown(c->fd, SHUT_WR);
	conn_consume_input(c, conn_input_available(c));
	timer_arm(c, TIMER_LINGER, LINGER_MS);
}

static bool conn_response_finished(const conn_t *c)
{
	return conn_output_pending(c) == 0 && c->gen == GEN_NONE && c->timer_kind == TIMER_NONE &&
	       !c->hang;
}

static void conn_finish_response(conn_t *c)
{
	conn_end_inflight(c);
	c->logged = false;
	request_free(&c->req);
	if (c->reset_after) {
		/* Pause briefly so the partial body leaves our send queue first. */
		c->phase = PHASE_CLOSING;
		timer_arm(c, TIMER_RESET, RESET_PAUSE_MS);
	} else if (c->close_after) {
		conn_start_closing(c);
	} else {
		/* Even if the peer half-closed, answer what it already pipelined;
         * conn_pump closes once no complete request is left. */
		c->phase = PHASE_HEAD;
	}
}

/* Appends the next piece of a streamed body to the output buffer. */
static void conn_generate(conn_t *c)
{
	uint64_t left = c->gen_total - c->gen_offset;
	size_t n = (size_t)(left < STREAM_CHUNK ? left : STREAM_CHUNK);
	if (c->gen_chunked && n > 0)
		buf_printf(&c->out, "%zx\r\n", n);
	if (c->gen == GEN_BINARY)
		buf_append_binary(&c->out, c->gen_offset, n);
	else
		buf_append_pattern(&c->out, c->gen_offset, n);
	c->gen_offset += n;
	if (c->gen_chunked)
		buf_puts(&c->out, n > 0 ? "\r\n" : "0\r\n\r\n");
	if (c->gen_offset == c->gen_total && (!c->gen_chunked || n == 0))
		c->gen = GEN_NONE;
}

/* Sends what it can without blocking, refilling streamed bodies as the
 * socket drains; finishes the response when everything is out. */
static void conn_flush(conn_t *c)
{
	for (int round = 0; round < SENDS_PER_EVENT && !c->dead; round++) {
		if (c->gen != GEN_NONE && conn_output_pending(c) < STREAM_CHUNK)
			conn_generate(c);
		size_t pending = conn_output_pending(c);
		if (pending == 0)
			break;
		ssize_t n = send(c->fd, c->out.data + c->out_sent, pending, MSG_NOSIGNAL);
		if (n > 0) {
			c->out_sent += (size_t)n;
			if (c->out_sent == c->out.len) {
				c->out_sent = c->out.len = 0;
				if (c->out.cap > 1024 * 1024)
					buf_free(&c->out); /* e.g. after a large /log */
			}
		} else if (n < 0 && errno == EINTR) {
			continue;
		} else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			break;
		} else {
			conn_kill(c, false); /* EPIPE, ECONNRESET, ... */
			return;
		}
	}
	if (!c->dead && c->phase == PHASE_RESPOND && conn_response_finished(c))
		conn_finish_response(c);
}

/* ------------------------------------------------------------------ */
/* Responses                                                           */
/* ------------------------------------------------------------------ */

static const char *reason_phrase(int status)
{
	switch (status) {
	case 100:
		return "Continue";
	case 101:
		return "Switching Protocols";
	case 200:
		return "OK";
	case 201:
		return "Created";
	case 202:
		return "Accepted";
	case 203:
		return "Non-Authoritative Information";
	case 204:
		return "No Content";
	case 205:
		return "Reset Content";
	case 206:
		return "Partial Content";
	case 300:
		return "Multiple Choices";
	case 301:
		return "Moved Permanently";
	case 302:
		return "Found";
	case 303:
		return "See Other";
	case 304:
		return "Not Modified";
	case 307:
		return "Temporary Redirect";
	case 308:
		return "Permanent Redirect";
	case 400:
		return "Bad Request";
	case 401:
		return "Unauthorized";
	case 403:
		return "Forbidden";
	case 404:
		return "Not Found";
	case 405:
		return "Method Not Allowed";
	case 406:
		return "Not Acceptable";
	case 408:
		return "Request Timeout";
	case 409:
		return "Conflict";
	case 410:
		return "Gone";
	case 411:
		return "Length Required";
	case 412:
		return "Precondition Failed";
	case 413:
		return "Content Too Large";
	case 414:
		return "URI Too Long";
	case 415:
		return "Unsupported Media Type";
	case 416:
		return "Range Not Satisfiable";
	case 417:
		return "Expectation Failed";
	case 418:
		return "I'm a teapot";
	case 421:
		return "Misdirected Request";
	case 422:
		return "Unprocessable Content";
	case 425:
		return "Too Early";
	case 426:
		return "Upgrade Required";
	case 429:
		return "Too Many Requests";
	case 431:
		return "Request Header Fields Too Large";
	case 451:
		return "Unavailable For Legal Reasons";
	case 500:
		return "Internal Server Error";
	case 501:
		return "Not Implemented";
	case 502:
		return "Bad Gateway";
	case 503:
		return "Service Unavailable";
	case 504:
		return "Gateway Timeout";
	case 505:
		return "HTTP Version Not Supported";
	default:
		return "Unknown";
	}
}

static bool status_has_no_body(int status)
{
	return status == 204 || status == 304;
}

#define LENGTH_CHUNKED UINT64_MAX

/* Writes the status line and headers.  `extra` is preformatted
 * "Name: value\r\n" lines or NULL.  A content_length of LENGTH_CHUNKED
 * means a chunked body (or, for HTTP/1.0, one delimited by closing). */
static void begin_response(conn_t *c, int status, const char *content_type, uint64_t content_length,
                           const char *extra)
{
	char date[40];
	format_http_date(time(NULL), date);
	if (c->req.version_minor == 0 && content_length == LENGTH_CHUNKED)
		c->close_after = true;
	if (!c->req.keep_alive)
		c->close_after = true;
	buf_t *o = &c->out;
	buf_printf(o, "HTTP/1.1 %d %s\r\nDate: %s\r\nServer: sc-testserver\r\n", status,
	           reason_phrase(status), date);
	if (content_type)
		buf_printf(o, "Content-Type: %s\r\n", content_type);
	if (status_has_no_body(status))
		; /* neither length nor body (RFC 9110 8.6) */
	else if (content_length != LENGTH_CHUNKED)
		buf_printf(o, "Content-Length: %" PRIu64 "\r\n", content_length);
	else if (c->req.version_minor == 1)
		buf_puts(o, "Transfer-Encoding: chunked\r\n");
	if (c->close_after)
		buf_puts(o, "Connection: close\r\n");
	else if (c->req.version_minor == 0)
		buf_puts(o, "Connection: keep-alive\r\n");
	if (extra)
		buf_puts(o, extra);
	buf_puts(o, "\r\n");
	if (c->logged)
		log_set_status(c->log_seq, status);
}

static void respond(conn_t *c, int status, const char *content_type, const void *body, size_t len,
                    const char *extra)
{
	if (status_has_no_body(status))
		len = 0;
	begin_response(c, status, content_type, len, extra);
	if (!c->req.is_head)
		buf_append(&c->out, body, len);
}

static void respond_buf(conn_t *c, int status, const char *content_type, const buf_t *body,
                        const char *extra)
{
	respond(c, status, content_type, body->data, body->len, extra);
}

static void respond_text(conn_t *c, int status, const char *text)
{
	respond(c, status, "text/plain; charset=utf-8", text, strlen(text), NULL);
}

static void respond_html_message(conn_t *c, int status, const char *message)
{
	buf_t b = { 0 };
	buf_printf(&b,
	           "<!DOCTYPE html>\n<html><head><title>%d %s</title></head>\n"
	           "<body><h1>%d %s</h1><p>",
	           status, reason_phrase(status), status, reason_phrase(status));
	html_escape(&b, message);
	buf_puts(&b, "</p></body></html>\n");
	respond_buf(c, status, "text/html; charset=utf-8", &b, NULL);
	buf_free(&b);
}

static void respond_not_found(conn_t *c)
{
	respond_html_message(c, 404, "No such path on sc-testserver.");
}

/* Error for a request we could not (fully) parse: answer and close. */
static void respond_protocol_error(conn_t *c, int status, const char *why)
{
	c->phase = PHASE_RESPOND;
	c->close_after = true;
	c->req.keep_alive = false;
	respond_html_message(c, status, why);
}

/* Starts a streamed body of `total` bytes after writing the headers. */
static void respond_stream(conn_t *c, const char *content_type, enum generator gen, uint64_t total,
                           bool chunked)
{
	begin_response(c, 200, content_type, chunked ? LENGTH_CHUNKED : total, NULL);
	if (c->req.is_head)
		return;
	c->gen = gen;
	c->gen_offset = 0;
	c->gen_total = total;
	c->gen_chunked = chunked && c->req.version_minor == 1;
	if (total == 0 && !c->gen_chunked)
		c->gen = GEN_NONE;
}

/* ------------------------------------------------------------------ */
/* Query strings and request headers                                   */
/* ------------------------------------------------------------------ */

static int hex_value(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

/* Percent-decodes s[0..n); malformed escapes are kept literally.  The
 * decoded length goes to *out_len (the string may contain NULs). */
static char *percent_decode(const char *s, size_t n, bool plus_is_space, size_t *out_len)
{
	char *out = xcalloc(n + 1, 1);
	size_t j = 0;
	for (size_t i = 0; i < n; i++) {
		int hi, lo;
		if (s[i] == '%' && i + 2 < n && (hi = hex_value(s[i + 1])) >= 0 &&
		    (lo = hex_value(s[i + 2])) >= 0) {
			out[j++] = (char)(hi * 16 + lo);
			i += 2;
		} else if (s[i] == '+' && plus_is_space) {
			out[j++] = ' ';
		} else {
			out[j++] = s[i];
		}
	}
	out[j] = '\0';
	if (out_len)
		*out_len = j;
	return out;
}

/* The decoded value of `key` in a query string (first occurrence),
 * malloc'd; NULL if absent.  "key" without "=" yields "". */
static char *query_param(const char *query, const char *key)
{
	const char *p = query;
	while (p && *p) {
		const char *end = strchr(p, '&');
		size_t seg_len = end ? (size_t)(end - p) : strlen(p);
		const char *eq = memchr(p, '=', seg_len);
		size_t name_len = eq ? (size_t)(eq - p) : seg_len;
		char *name = percent_decode(p, name_len, true, NULL);
		bool match = strcmp(name, key) == 0;
		free(name);
		if (match) {
			if (!eq)
				return xstrdup("");
			return percent_decode(eq + 1, seg_len - name_len - 1, true, NULL);
		}
		p = end ? end + 1 : NULL;
	}
	return NULL;
}

/* Numeric query parameter; absent -> dflt.  Present but not a number, or
 * above max -> *ok = false. */
static uint64_t query_u64(const char *query, const char *key, uint64_t dflt, uint64_t max, bool *ok)
{
	char *value = query_param(query, key);
	if (!value)
		return dflt;
	uint64_t v = 0;
	if (!parse_u64_str(value, &v) || v > max)
		*ok = false;
	free(value);
	return v;
}

static const char *request_header(const request_t *r, const char *name)
{
	for (int i = 0; i < r->header_count; i++)
		if (strcasecmp(r->headers[i].name, name) == 0)
			return r->headers[i].value;
	return NULL;
}

/* Does a comma-separated header value list `token` (case-insensitive)? */
static bool header_has_token(const char *value, const char *token)
{
	size_t token_len = strlen(token);
	const char *p = value;
	while (p && *p) {
		while (*p == ' ' || *p == '\t' || *p == ',')
			p++;
		const char *end = p;
		while (*end && *end != ',')
			end++;
		const char *trim = end;
		while (trim > p && (trim[-1] == ' ' || trim[-1] == '\t'))
			trim--;
		if ((size_t)(trim - p) == token_len && strncasecmp(p, token, token_len) == 0)
			return true;
		p = *end ? end + 1 : NULL;
	}
	return false;
}

/* ------------------------------------------------------------------ */
/* Request parsing                                                     */
/* ------------------------------------------------------------------ */

enum {
	PARSE_OK = 0,
	PARSE_NEED_MORE = -1
}; /* otherwise an HTTP error status */

static bool is_tchar(unsigned char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
	       (ch && strchr("!#$%&'*+-.^_`|~", ch));
}

static bool is_token(const char *s, size_t max_len)
{
	size_t n = 0;
	for (; s[n]; n++)
		if (!is_tchar((unsigned char)s[n]) || n >= max_len)
			return false;
	return n > 0;
}

/* Length of the head (through its blank line) at p, or 0 if incomplete.
 * Bare LF line endings are accepted too. */
static size_t find_head_end(const char *p, size_t n)
{
	const char *nl = p;
	const char *end = p + n;
	while ((nl = memchr(nl, '\n', (size_t)(end - nl))) != NULL) {
		nl++;
		if (nl < end && *nl == '\n')
			return (size_t)(nl + 1 - p);
		if (nl + 1 < end && nl[0] == '\r' && nl[1] == '\n')
			return (size_t)(nl + 2 - p);
		if (nl >= end)
			break;
	}
	return 0;
}

static int parse_target(request_t *r, const char *target)
{
	for (const unsigned char *t = (const unsigned char *)target; *t; t++)
		if (*t <= 0x20 || *t == 0x7f)
			return 400;
	const char *path = target;
	if (strncasecmp(target, "http://", 7) == 0 || strncasecmp(target, "https://", 8) == 0) {
		/* absolute-form: keep only the path and query */
		const char *authority = strstr(target, "//") + 2;
		path = authority + strcspn(authority, "/?#");
		if (*path != '/')
			path = "/";
	} else if (strcmp(target, "*") == 0 && strcmp(r->method, "OPTIONS") == 0) {
		path = "*";
	} else if (target[0] != '/') {
		return 400;
	}
	size_t target_len = strcspn(path, "#");
	size_t path_len = strcspn(path, "?#");
	r->path = xstrndup(path, path_len);
	r->query = path[path_len] == '?' ? xstrndup(path + path_len + 1, target_len - path_len - 1)
	                                 : xstrdup("");
	r->target = xstrndup(path, target_len);
	return PARSE_OK;
}

static int parse_request_line(request_t *r, char *line)
{
	char *sp1 = strchr(line, ' ');
	if (!sp1)
		return 400;
	*sp1 = '\0';
	char *target = sp1 + 1;
	char *sp2 = strchr(target, ' ');
	if (!sp2)
		return 400;
	*sp2 = '\0';
	const char *version = sp2 + 1;
	r->method = line;
	if (!is_token(r->method, 32))
		return 400;
	if (strcmp(version, "HTTP/1.1") == 0)
		r->version_minor = 1;
	else if (strcmp(version, "HTTP/1.0") == 0)
		r->version_minor = 0;
	else if (strncmp(version, "HTTP/", 5) == 0 && strlen(version) == 8 && version[6] == '.')
		return 505;
	else
		return 400;
	return parse_target(r, target);
}

static int parse_header_line(request_t *r, char *line)
{
	if (line[0] == ' ' || line[0] == '\t')
		return 400; /* obsolete line folding */
	char *colon = strchr(line, ':');
	if (!colon)
		return 400;
	*colon = '\0';
	if (!is_token(line, 256))
		return 400;
	char *value = colon + 1;
	while (*value == ' ' || *value == '\t')
		value++;
	char *end = value + strlen(value);
	while (end > value && (end[-1] == ' ' || end[-1] == '\t'))
		*--end = '\0';
	for (const unsigned char *v = (const unsigned char *)value; *v; v++)
		if ((*v < 0x20 && *v != '\t') || *v == 0x7f)
			return 400;
	if (r->header_count == MAX_HEADERS)
		return 431;
	r->headers[r->header_count].name = line;
	r->headers[r->header_count].value = value;
	r->header_count++;
	return PARSE_OK;
}

/* Derives framing and connection handling from the parsed headers. */
static int interpret_headers(request_t *r)
{
	const char *connection = request_header(r, "Connection");
	if (r->version_minor == 1)
		r->keep_alive = !(connection && header_has_token(connection, "close"));
	else
		r->keep_alive = connection && header_has_token(connection, "keep-alive");
	r->is_head = strcmp(r->method, "HEAD") == 0;

	bool have_length = false;
	for (int i = 0; i < r->header_count; i++) {
		if (strcasecmp(r->headers[i].name, "Content-Length") != 0)
			continue;
		uint64_t n;
		if (!parse_u64_str(r->headers[i].value, &n))
			return 400;
		if (have_length && n != r->content_length)
			return 400;
		have_length = true;
		r->content_length = n;
	}
	const char *te = request_header(r, "Transfer-Encoding");
	if (te) {
		if (strcasecmp(te, "chunked") != 0)
			return 501;
		if (have_length)
			return 400; /* ambiguous framing: refuse rather than guess */
		r->chunked = true;
	}
	if (r->content_length > MAX_BODY_BYTES)
		return 413;
	const char *expect = request_header(r, "Expect");
	if (expect) {
		if (strcasecmp(expect, "100-continue") != 0)
			return 417;
		r->expect_continue = r->version_minor == 1;
	}
	return PARSE_OK;
}

/* Parses the request head at the front of the input, if complete. */
static int parse_request_head(conn_t *c)
{
	/* RFC 9112 2.2: ignore empty lines before a request line. */
	while (conn_input_available(c) > 0 &&
	       (conn_input(c)[0] == '\r' || conn_input(c)[0] == '\n'))
		conn_consume_input(c, 1);
	size_t avail = conn_input_available(c);
	size_t head_len = find_head_end(conn_input(c), min_size(avail, MAX_HEAD_BYTES));
	if (head_len == 0)
		return avail >= MAX_HEAD_BYTES ? 431 : PARSE_NEED_MORE;

	request_t *r = &c->req;
	request_free(r);
	r->head = xstrndup(conn_input(c), head_len);
	conn_consume_input(c, head_len);
	if (memchr(r->head, '\0', head_len))
		return 400;

	char *line = r->head;
	for (int index = 0; line && *line; index++) {
		char *nl = strchr(line, '\n');
		char *next = nl ? nl + 1 : NULL;
		if (nl)
			*nl = '\0';
		size_t len = strlen(line);
		if (len > 0 && line[len - 1] == '\r')
			line[len - 1] = '\0';
		if (line[0] == '\0')
			break; /* the blank line ending the head */
		int status = index == 0 ? parse_request_line(r, line) : parse_header_line(r, line);
		if (status != PARSE_OK)
			return status;
		line = next;
	}
	if (!r->path)
		return 400;
	return interpret_headers(r);
}

/* Finds a complete line at the front of the input; returns its length
 * including the LF, 0 if incomplete, or SIZE_MAX if it is too long. */
static size_t input_line(const conn_t *c)
{
	size_t avail = conn_input_available(c);
	const char *p = conn_input(c);
	const char *nl = memchr(p, '\n', min_size(avail, MAX_CHUNK_LINE));
	if (nl)
		return (size_t)(nl - p) + 1;
	return avail >= MAX_CHUNK_LINE ? SIZE_MAX : 0;
}

/* Incremental chunked-body decoder; consumes input as it goes. */
static int read_chunked_body(conn_t *c)
{
	request_t *r = &c->req;
	for (;;) {
		size_t avail = conn_input_available(c);
		const char *p = conn_input(c);
		switch (r->chunk_state) {
		case CHUNK_SIZE: {
			size_t len = input_line(c);
			if (len == 0)
				return PARSE_NEED_MORE;
			if (len == SIZE_MAX)
				return 400;
			uint64_t size = 0;
			size_t digits = 0;
			for (; digits < len && hex_value(p[digits]) >= 0; digits++) {
				if (size >> 60)
					return 413;
				size = size * 16 + (uint64_t)hex_value(p[digits]);
			}
			if (digits == 0 ||
			    (p[digits] != ';' && p[digits] != '\r' && p[digits] != '\n' &&
			     p[digits] != ' ' && p[digits] != '\t'))
				return 400;
			if (size > MAX_BODY_BYTES - r->body.len)
				return 413;
			conn_consume_input(c, len);
			r->chunk_left = size;
			r->chunk_state = size == 0 ? CHUNK_TRAILER : CHUNK_DATA;
			break;
		}
		case CHUNK_DATA: {
			size_t n = (size_t)(r->chunk_left < avail ? r->chunk_left : avail);
			if (n == 0)
				return PARSE_NEED_MORE;
			buf_append(&r->body, p, n);
			conn_consume_input(c, n);
			r->chunk_left -= n;
			if (r->chunk_left == 0)
				r->chunk_state = CHUNK_DATA_END;
			break;
		}
		case CHUNK_DATA_END: {
			size_t len = input_line(c);
			if (len == 0)
				return PARSE_NEED_MORE;
			if (len > 2 || (len == 2 && p[0] != '\r'))
				return 400;
			conn_consume_input(c, len);
			r->chunk_state = CHUNK_SIZE;
			break;
		}
		case CHUNK_TRAILER: {
			size_t len = input_line(c);
			if (len == 0)
				return PARSE_NEED_MORE;
			if (len == SIZE_MAX || ++r->trailer_lines > MAX_TRAILER_LINES)
				return 431;
			bool blank = len == 1 || (len == 2 && p[0] == '\r');
			conn_consume_input(c, len);
			if (blank)
				return PARSE_OK;
			break; /* trailer fields are ignored */
		}
		}
	}
}

static int read_request_body(conn_t *c)
{
	request_t *r = &c->req;
	if (r->chunked)
		return read_chunked_body(c);
	if (conn_input_available(c) < r->content_length)
		return PARSE_NEED_MORE;
	buf_append(&r->body, conn_input(c), (size_t)r->content_length);
	conn_consume_input(c, (size_t)r->content_length);
	return PARSE_OK;
}

/* Should the client be told to go ahead with its body? */
static bool request_wants_continue(const conn_t *c)
{
	const request_t *r = &c->req;
	if (!r->expect_continue)
		return false;
	if (r->chunked)
		return conn_input_available(c) == 0;
	return r->content_length > 0 && conn_input_available(c) < r->content_length;
}

/* ------------------------------------------------------------------ */
/* Generated content                                                   */
/* ------------------------------------------------------------------ */

static const char *const WORDS[] = {
	"alpha",  "bravo",  "charlie", "delta", "echo",    "foxtrot",  "golf",    "hotel",
	"india",  "juliet", "kilo",    "lima",  "mike",    "november", "oscar",   "papa",
	"quebec", "romeo",  "sierra",  "tango", "uniform", "victor",   "whiskey", "xray",
	"yankee", "zulu",   "scrape",  "pipe",  "fetch",   "parse",    "retry",   "sink",
};

/* Deterministic pseudo-random stream (64-bit LCG) seeded per page. */
static uint64_t rng_next(uint64_t *state)
{
	*state = *state * 6364136223846793005ull + 1442695040888963407ull;
	return *state >> 33;
}

static void append_paragraph(buf_t *b, uint64_t *rng, uint64_t page, unsigned index)
{
	buf_printf(b, "<p>Paragraph %u of page %" PRIu64 ":", index, page);
	unsigned words = 30 + (unsigned)(rng_next(rng) % 30);
	for (unsigned w = 0; w < words; w++)
		buf_printf(b, " %s", WORDS[rng_next(rng) % (sizeof WORDS / sizeof *WORDS)]);
	buf_puts(b, ".</p>\n");
}

/* Generated page N.  Link targets (all deterministic):
 *   /page/N+1            absolute path
 *   ../page/N+2          parent-relative (resolves to /page/N+2)
 *   N+3?x=1#frag         document-relative (resolves to /page/N+3?x=1)
 *   http://HOST/page/N+4 absolute URL with the request's Host
 *   http://HOST/page/N/2 absolute URL (N/2 rounded down)
 * `size` pads with extra paragraphs until the page is at least that big. */
static void build_page(buf_t *b, uint64_t n, const char *host, size_t size)
{
	uint64_t rng = n * 2654435761ull + 12345;
	buf_printf(b,
	           "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	           "<title>Page %" PRIu64 "</title>\n"
	           "<meta name=\"description\" content=\"Description of page %" PRIu64 "\">\n"
	           "</head>\n<body>\n<h1>Page %" PRIu64 "</h1>\n",
	           n, n, n);
	unsigned index = 1;
	for (; index <= 3; index++)
		append_paragraph(b, &rng, n, index);
	buf_puts(b, "<ul class=\"links\">\n");
	buf_printf(b, "<li><a href=\"/page/%" PRIu64 "\">Page %" PRIu64 "</a></li>\n", n + 1,
	           n + 1);
	buf_printf(b, "<li><a href=\"../page/%" PRIu64 "\">Page %" PRIu64 "</a></li>\n", n + 2,
	           n + 2);
	buf_printf(b, "<li><a href=\"%" PRIu64 "?x=1#frag\">Page %" PRIu64 "</a></li>\n", n + 3,
	           n + 3);
	buf_puts(b, "<li><a href=\"http://");
	html_escape(b, host);
	buf_printf(b, "/page/%" PRIu64 "\">Page %" PRIu64 "</a></li>\n", n + 4, n + 4);
	buf_puts(b, "<li><a href=\"http://");
	html_escape(b, host);
	buf_printf(b, "/page/%" PRIu64 "\">Page %" PRIu64 "</a></li>\n", n / 2, n / 2);
	buf_puts(b, "</ul>\n");
	static const char tail[] = "</body>\n</html>\n";
	for (; b->len + sizeof tail - 1 < size; index++)
		append_paragraph(b, &rng, n, index);
	buf_puts(b, tail);
}

/* An HTML document of exactly `size` bytes (plain text if too small). */
static void build_sized_html(buf_t *b, const char *title, size_t size)
{
	buf_t head = { 0 };
	buf_printf(&head,
	           "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>%s</title>"
	           "</head>\n<body>\n",
	           title);
	static const char tail[] = "</body></html>\n";
	size_t frame = head.len + sizeof tail - 1;
	if (size < frame) {
		buf_append_pattern(b, 0, size);
		buf_free(&head);
		return;
	}
	size_t start = b->len;
	buf_append(b, head.data, head.len);
	buf_free(&head);
	size_t middle_end = start + size - (sizeof tail - 1);
	buf_t para = { 0 };
	for (unsigned i = 1; b->len < middle_end; i++) {
		para.len = 0;
		buf_printf(&para, "<p>Line %u of the %s document, repeated to fill space.</p>\n", i,
		           title);
		if (para.len <= middle_end - b->len)
			buf_append(b, para.data, para.len);
		else
			buf_append_pattern(b, 0, middle_end - b->len - 1), buf_putc(b, '\n');
	}
	buf_free(&para);
	buf_puts(b, tail);
}

/* ------------------------------------------------------------------ */
/* Endpoint handlers                                                   */
/* ------------------------------------------------------------------ */

static const char *request_host(const conn_t *c, char *fallback, size_t fallback_size)
{
	const char *host = request_header(&c->req, "Host");
	if (host && *host)
		return host;
	snprintf(fallback, fallback_size, "127.0.0.1:%d", listen_port);
	return fallback;
}

static void handle_index(conn_t *c)
{
	static const char body[] =
	        "<!DOCTYPE html>\n<html><head><title>sc-testserver</title></head>\n<body>\n"
	        "<h1>sc-testserver</h1>\n<ul>\n"
	        "<li><a href=\"/page/1\">/page/N</a></li>\n"
	        "<li><a href=\"/status/418\">/status/CODE</a></li>\n"
	        "<li><a href=\"/delay/500\">/delay/MS</a></li>\n"
	        "<li><a href=\"/redirect/3\">/redirect/N</a></li>\n"
	        "<li><a href=\"/gzip\">/gzip</a></li>\n"
	        "<li><a href=\"/slow\">/slow</a></li>\n"
	        "<li><a href=\"/echo\">/echo</a></li>\n"
	        "<li><a href=\"/latin1\">/latin1</a></li>\n"
	        "<li><a href=\"/stats\">/stats</a></li>\n"
	        "<li><a href=\"/log\">/log</a></li>\n"
	        "</ul>\n</body></html>\n";
	respond(c, 200, "text/html; charset=utf-8", body, sizeof body - 1, NULL);
}

static void handle_page(conn_t *c, const char *arg)
{
	uint64_t n;
	if (!parse_u64_str(arg, &n)) {
		respond_not_found(c);
		return;
	}
	bool ok = true;
	uint64_t size = query_u64(c->req.query, "size", 0, MAX_GENERATED_BYTES, &ok);
	if (!ok) {
		respond_html_message(c, 400, "size must be a byte count up to 64 MiB");
		return;
	}
	char fallback[64];
	const char *host = request_host(c, fallback, sizeof fallback);
	buf_t b = { 0 };
	build_page(&b, n, host, (size_t)size);
	respond_buf(c, 200, "text/html; charset=utf-8", &b, NULL);
	buf_free(&b);
}

static void handle_status(conn_t *c, const char *arg)
{
	uint64_t code;
	if (!parse_u64_str(arg, &code) || code < 200 || code > 599) {
		respond_html_message(c, 400, "status must be 200-599");
		return;
	}
	char body[64];
	snprintf(body, sizeof body, "%d %s\n", (int)code, reason_phrase((int)code));
	respond_text(c, (int)code, body);
}

static void handle_delay(conn_t *c, const char *arg)
{
	uint64_t ms;
	if (!parse_u64_str(arg, &ms) || ms > MAX_DELAY_MS) {
		respond_html_message(c, 400, "delay must be 0-3600000 milliseconds");
		return;
	}
	c->delay_ms = (int64_t)ms;
	timer_arm(c, TIMER_DELAY, (int64_t)ms);
}

static void finish_delay(conn_t *c)
{
	char body[64];
	snprintf(body, sizeof body, "delayed %" PRId64 " ms\n", c->delay_ms);
	respond_text(c, 200, body);
}

static void respond_redirect(conn_t *c, int status, const char *location)
{
	buf_t extra = { 0 }, body = { 0 };
	buf_printf(&extra, "Location: %s\r\n", location);
	buf_puts(&body, "<!DOCTYPE html>\n<html><head><title>Redirect</title></head>\n<body><p>"
	                "Moved to <a href=\"");
	html_escape(&body, location);
	buf_puts(&body, "\">");
	html_escape(&body, location);
	buf_puts(&body, "</a>.</p></body></html>\n");
	respond(c, status, "text/html; charset=utf-8", body.data, body.len, extra.data);
	buf_free(&extra);
	buf_free(&body);
}

static void handle_redirect(conn_t *c, const char *arg)
{
	uint64_t n;
	if (!parse_u64_str(arg, &n)) {
		respond_not_found(c);
		return;
	}
	if (n == 0) {
		static const char body[] =
		        "<!DOCTYPE html>\n<html><head><title>Redirect target</title>"
		        "</head>\n<body><h1>Redirects done</h1></body></html>\n";
		respond(c, 200, "text/html; charset=utf-8", body, sizeof body - 1, NULL);
		return;
	}
	char location[64];
	snprintf(location, sizeof location, "/redirect/%" PRIu64, n - 1);
	respond_redirect(c, 302, location);
}

static void handle_redirect_to(conn_t *c)
{
	bool ok = true;
	uint64_t status = query_u64(c->req.query, "status", 302, 399, &ok);
	char *url = query_param(c->req.query, "url");
	if (!ok || status < 300 || !url || !*url || strpbrk(url, "\r\n")) {
		respond_html_message(c, 400, "usage: /redirect-to?url=URL&status=3xx");
	} else {
		respond_redirect(c, (int)status, url);
	}
	free(url);
}

static bool header_value_is_safe(const char *v)
{
	for (; *v; v++)
		if ((unsigned char)*v < 0x20 || *v == 0x7f)
			return false;
	return true;
}

static void handle_flaky(conn_t *c, const char *id)
{
	bool ok = true;
	uint64_t fail = query_u64(c->req.query, "fail", 1, UINT32_MAX, &ok);
	uint64_t status = query_u64(c->req.query, "status", 503, 599, &ok);
	char *retry_after = query_param(c->req.query, "retry_after");
	if (!ok || status < 200 || *id == '\0' ||
	    (retry_after && !header_value_is_safe(retry_after))) {
		respond_html_message(c, 400, "usage: /flaky/ID?fail=K&status=503&retry_after=S");
		free(retry_after);
		return;
	}
	bool inserted;
	int64_t *seen = strmap_value(&stats.flaky, id, &inserted);
	++*seen;
	char body[96];
	if ((uint64_t)*seen <= fail) {
		buf_t extra = { 0 };
		if (retry_after)
			buf_printf(&extra, "Retry-After: %s\r\n", retry_after);
		snprintf(body, sizeof body, "flaky failure %" PRId64 " of %" PRIu64 "\n", *seen,
		         fail);
		respond(c, (int)status, "text/plain; charset=utf-8", body, strlen(body),
		        extra.data);
		buf_free(&extra);
	} else {
		snprintf(body, sizeof body, "flaky success after %" PRIu64 " failures\n", fail);
		respond_text(c, 200, body);
	}
	free(retry_after);
}

static void handle_ratelimit(conn_t *c, const char *id)
{
	bool ok = true;
	uint64_t after = query_u64(c->req.query, "after", 1, 86400, &ok);
	uint64_t use_date = query_u64(c->req.query, "date", 0, 1, &ok);
	if (!ok || *id == '\0') {
		respond_html_message(c, 400, "usage: /ratelimit/ID?after=S&date=0|1");
		return;
	}
	int64_t now = clock_ns();
	bool inserted;
	int64_t *window_end = strmap_value(&stats.ratelimit, id, &inserted);
	if (inserted)
		*window_end = now + (int64_t)after * 1000000000;
	if (now >= *window_end) {
		respond_text(c, 200, "rate limit window passed\n");
		return;
	}
	int64_t remaining = (*window_end - now + 999999999) / 1000000000; /* round up */
	buf_t extra = { 0 };
	if (use_date) {
		char date[40];
		format_http_date(time(NULL) + (time_t)remaining, date);
		buf_printf(&extra, "Retry-After: %s\r\n", date);
	} else {
		buf_printf(&extra, "Retry-After: %" PRId64 "\r\n", remaining);
	}
	char body[64];
	snprintf(body, sizeof body, "rate limited, retry in %" PRId64 " s\n", remaining);
	respond(c, 429, "text/plain; charset=utf-8", body, strlen(body), extra.data);
	buf_free(&extra);
}

static bucket_t *bucket_find(const char *id, double rate, double burst)
{
	for (size_t i = 0; i < bucket_count; i++)
		if (strcmp(buckets[i].id, id) == 0)
			return &buckets[i];
	if (bucket_count == MAX_BUCKETS || strlen(id) >= sizeof buckets[0].id)
		return NULL;
	bucket_t *b = &buckets[bucket_count++];
	memset(b, 0, sizeof *b);
	snprintf(b->id, sizeof b->id, "%s", id);
	b->rate = rate;
	b->burst = burst;
	b->tokens = burst;
	b->tokens_at_ns = clock_ns();
	return b;
}

/* /bucket/ID?rate=N&burst=B&retry_after=S: a server that allows N requests
 * a second (bursts of B); beyond that a bare 429, or with retry_after a
 * 429 with Retry-After: S.  /bucket/ID?stats=1 tells what it saw, as JSON,
 * without counting itself: ok, refused, and early: requests that came
 * before the time the last Retry-After gave, and more than 50 ms after it
 * was given (those sooner were on their way before the client knew). */
static void handle_bucket(conn_t *c, const char *id)
{
	bool ok = true;
	uint64_t rate = query_u64(c->req.query, "rate", 10, 100000, &ok);
	uint64_t burst = query_u64(c->req.query, "burst", 1, 100000, &ok);
	uint64_t retry_after = query_u64(c->req.query, "retry_after", 0, 3600, &ok);
	uint64_t want_stats = query_u64(c->req.query, "stats", 0, 1, &ok);
	bucket_t *b = ok && *id ? bucket_find(id, (double)rate, (double)burst) : NULL;
	if (!b || rate == 0 || burst == 0) {
		respond_html_message(c, 400, "usage: /bucket/ID?rate=N&burst=B&retry_after=S");
		return;
	}
	if (want_stats) {
		char body[160];
		snprintf(body, sizeof body,
		         "{\"ok\":%" PRId64 ",\"refused\":%" PRId64 ",\"early\":%" PRId64 "}\n",
		         b->ok, b->refused, b->early);
		respond(c, 200, "application/json", body, strlen(body), NULL);
		return;
	}
	int64_t now = clock_ns();
	if (now < b->retry_until_ns && now > b->retry_given_ns + 50000000)
		b->early++;
	b->tokens += (double)(now - b->tokens_at_ns) * b->rate / 1e9;
	if (b->tokens > b->burst)
		b->tokens = b->burst;
	b->tokens_at_ns = now;
	if (b->tokens >= 1) {
		b->tokens -= 1;
		b->ok++;
		respond_text(c, 200, "within the rate\n");
		return;
	}
	b->refused++;
	buf_t extra = { 0 };
	if (retry_after) {
		buf_printf(&extra, "Retry-After: %" PRIu64 "\r\n", retry_after);
		int64_t until = now + (int64_t)retry_after * 1000000000;
		if (until > b->retry_until_ns) {
			b->retry_until_ns = until;
			b->retry_given_ns = now;
		}
	}
	respond(c, 429, "text/plain; charset=utf-8", "over the rate\n", 14, extra.data);
	buf_free(&extra);
}

static void handle_reset(conn_t *c);

/* FNV-1a of a string, then of a number's eight bytes. */
static uint64_t hash_str_num(const char *str, uint64_t num)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	for (; *str; str++)
		h = (h ^ (unsigned char)*str) * 0x100000001b3ULL;
	for (int i = 0; i < 8; i++)
		h = (h ^ ((num >> (8 * i)) & 0xff)) * 0x100000001b3ULL;
	return h ^ h >> 29;
}

/* Whether this request for ID on its Host fails, percent of them failing:
 * counted in blocks of 100/g (g = gcd(percent, 100)), of which exactly
 * percent/g fail, at places a hash of the Host, ID and block picks. */
static bool unreliable_fails(conn_t *c, const char *id, uint64_t percent)
{
	const char *host = request_header(&c->req, "Host");
	buf_t key = { 0 };
	buf_printf(&key, "%s %s", host ? host : "", id);
	bool inserted;
	uint64_t nth = (uint64_t)++ * strmap_value(&stats.unreliable, key.data, &inserted) - 1;
	uint64_t g = 100, a = percent;
	while (a) { /* g = gcd(percent, 100) */
		uint64_t t = g % a;
		g = a;
		a = t;
	}
	uint64_t block = 100 / g, fails = percent / g, at = nth % block, base = nth - at;
	/* This request fails when its hash ranks among the block's lowest. */
	uint64_t mine = hash_str_num(key.data, nth), rank = 0;
	for (uint64_t i = 0; i < block; i++) {
		uint64_t other = hash_str_num(key.data, base + i);
		rank += other < mine || (other == mine && base + i < nth);
	}
	buf_free(&key);
	return rank < fails;
}

/* /unreliable/ID?percent=P&fail=503|reset: a flaky backend, whose failures
 * do not depend on the pace.  The requests for ID on a Host are counted in
 * blocks of 100/g (g = gcd(P, 100)), of which exactly P/g fail (a 503, or a
 * partial body cut by an RST), at places a hash of the Host, ID and block
 * picks: the share is exact over any run, the failures scattered (two in a
 * row across blocks), the same for the same order of requests. */
static void handle_unreliable(conn_t *c, const char *id)
{
	bool ok = true;
	uint64_t percent = query_u64(c->req.query, "percent", 10, 100, &ok);
	char *fail = query_param(c->req.query, "fail");
	bool reset = fail && strcmp(fail, "reset") == 0;
	if (!ok || *id == '\0' || (fail && !reset && strcmp(fail, "503") != 0)) {
		respond_html_message(c, 400, "usage: /unreliable/ID?percent=P&fail=503|reset");
		free(fail);
		return;
	}
	free(fail);
	if (!unreliable_fails(c, id, percent)) {
		respond_text(c, 200, "the backend answered\n");
	} else if (reset) {
		handle_reset(c);
	} else {
		static const char body[] = "the backend failed\n";
		respond(c, 503, "text/plain; charset=utf-8", body, sizeof body - 1, NULL);
	}
}

/* /crowded?gap=MS: a server that refuses requests that come close: a 503
 * when the last /crowded request to this Host arrived under MS ago. */
static void handle_crowded(conn_t *c)
{
	bool ok = true;
	uint64_t gap = query_u64(c->req.query, "gap", 100, 60000, &ok);
	if (!ok) {
		respond_html_message(c, 400, "usage: /crowded?gap=MS");
		return;
	}
	bool inserted;
	const char *host = request_header(&c->req, "Host");
	int64_t *last = strmap_value(&stats.crowded, host ? host : "", &inserted);
	int64_t now = clock_ns();
	bool close = !inserted && now - *last < (int64_t)gap * 1000000;
	*last = now;
	if (close)
		respond(c, 503, "text/plain; charset=utf-8", "too close\n", 10, NULL);
	else
		respond_text(c, 200, "spaced enough\n");
}

/* /loaded?base=MS: a server that slows under load: the answer takes MS
 * times the requests in flight to this Host (this one included). */
static void handle_loaded(conn_t *c)
{
	bool ok = true;
	uint64_t base = query_u64(c->req.query, "base", 10, 10000, &ok);
	if (!ok) {
		respond_html_message(c, 400, "usage: /loaded?base=MS");
		return;
	}
	bool inserted;
	int64_t inflight =
	        c->inflight_host ? *strmap_value(&stats.host_inflight, c->inflight_host, &inserted)
	                         : 1;
	c->delay_ms = (int64_t)base * (inflight > 0 ? inflight : 1);
	timer_arm(c, TIMER_DELAY, c->delay_ms);
}

static void handle_big(conn_t *c, const char *arg)
{
	uint64_t bytes;
	bool ok = true;
	uint64_t chunked = query_u64(c->req.query, "chunked", 0, 1, &ok);
	if (!parse_u64_str(arg, &bytes) || bytes > MAX_STREAM_BYTES || !ok) {
		respond_html_message(c, 400, "usage: /big/BYTES?chunked=0|1");
		return;
	}
	respond_stream(c, "text/plain; charset=utf-8", GEN_TEXT, bytes, chunked == 1);
}

static void handle_binary(conn_t *c, const char *arg)
{
	uint64_t bytes;
	if (!parse_u64_str(arg, &bytes) || bytes > MAX_STREAM_BYTES) {
		respond_html_message(c, 400, "usage: /binary/BYTES");
		return;
	}
	respond_stream(c, "application/octet-stream", GEN_BINARY, bytes, false);
}

static void handle_gzip(conn_t *c)
{
	bool ok = true;
	uint64_t size = query_u64(c->req.query, "size", 10000, MAX_GENERATED_BYTES, &ok);
	if (!ok) {
		respond_html_message(c, 400, "size must be a byte count up to 64 MiB");
		return;
	}
	buf_t plain = { 0 }, packed = { 0 };
	build_sized_html(&plain, "Gzip", (size_t)size);
	gzip_stored(&packed, (const unsigned char *)plain.data, plain.len);
	respond_buf(c, 200, "text/html; charset=utf-8", &packed,
	            "Content-Encoding: gzip\r\nVary: Accept-Encoding\r\n");
	buf_free(&plain);
	buf_free(&packed);
}

/* Whether an Accept-Encoding value names the coding token. */
static bool accepts_coding(const char *accept, const char *token)
{
	size_t n = strlen(token);
	for (const char *a = accept; a && (a = strstr(a, token)); a += n)
		if ((a == accept || a[-1] == ' ' || a[-1] == ',') &&
		    (a[n] == '\0' || a[n] == ',' || a[n] == ';' || a[n] == ' '))
			return true;
	return false;
}

/* /br and /zstd: the /gzip page in that coding when Accept-Encoding names
 * it, as it is otherwise. */
static void handle_coded(conn_t *c, const char *coding)
{
	bool ok = true;
	uint64_t size = query_u64(c->req.query, "size", 10000, MAX_GENERATED_BYTES, &ok);
	if (!ok) {
		respond_html_message(c, 400, "size must be a byte count up to 64 MiB");
		return;
	}
	bool coded = accepts_coding(request_header(&c->req, "Accept-Encoding"), coding);
	bool br = strcmp(coding, "br") == 0;
	buf_t plain = { 0 }, packed = { 0 };
	build_sized_html(&plain, br ? "Brotli" : "Zstandard", (size_t)size);
	if (coded) {
		char head[96];
		snprintf(head, sizeof head, "Content-Encoding: %s\r\nVary: Accept-Encoding\r\n",
		         coding);
		if (br)
			brotli_stored(&packed, (const unsigned char *)plain.data, plain.len);
		else
			zstd_stored(&packed, (const unsigned char *)plain.data, plain.len);
		respond_buf(c, 200, "text/html; charset=utf-8", &packed, head);
	} else {
		respond_buf(c, 200, "text/html; charset=utf-8", &plain,
		            "Vary: Accept-Encoding\r\n");
	}
	buf_free(&plain);
	buf_free(&packed);
}

static void handle_slow(conn_t *c)
{
	bool ok = true;
	uint64_t bytes = query_u64(c->req.query, "bytes", 20, 1000000, &ok);
	uint64_t interval = query_u64(c->req.query, "interval", 100, 60000, &ok);
	if (!ok) {
		respond_html_message(c, 400, "usage: /slow?bytes=N&interval=MS");
		return;
	}
	begin_response(c, 200, "text/plain; charset=utf-8", bytes, NULL);
	if (c->req.is_head || bytes == 0)
		return;
	c->drip_left = bytes;
	c->drip_offset = 0;
	c->drip_interval_ms = (int64_t)interval;
	timer_arm(c, TIMER_DRIP, (int64_t)interval);
}

static void drip_one_byte(conn_t *c)
{
	buf_append_pattern(&c->out, c->drip_offset++, 1);
	if (--c->drip_left > 0)
		timer_arm(c, TIMER_DRIP, c->drip_interval_ms);
}

static void handle_reset(conn_t *c)
{
	static const char partial[] = "partial body, then RST\n";
	c->close_after = true;
	c->reset_after = true;
	begin_response(c, 200, "text/plain; charset=utf-8", 100000, NULL);
	if (!c->req.is_head)
		buf_append(&c->out, partial, sizeof partial - 1);
}

/* The faults of broken responses (sc-fetch must never call them ok).
 * Each writes raw bytes, not through begin_response, then ends the
 * connection with a FIN (?close=fin, the default) or an RST (?close=rst). */
static void end_faulty(conn_t *c, int status)
{
	char *how = query_param(c->req.query, "close");
	c->close_after = true;
	c->reset_after = how && strcmp(how, "rst") == 0;
	free(how);
	if (c->logged)
		log_set_status(c->log_seq, status);
}

/* /cut-head: the header block stops mid-line, never reaching its blank line. */
static void handle_cut_head(conn_t *c)
{
	buf_puts(&c->out, "HTTP/1.1 200 OK\r\nContent-Type: text");
	end_faulty(c, 200);
}

/* /short-body: Content-Length says 100, ten bytes come. */
static void handle_short_body(conn_t *c)
{
	buf_puts(&c->out, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
	                  "Content-Length: 100\r\n\r\n0123456789");
	end_faulty(c, 200);
}

/* /chunked-cut: one chunk, then no terminating zero-size chunk. */
static void handle_chunked_cut(conn_t *c)
{
	buf_puts(&c->out, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
	                  "Transfer-Encoding: chunked\r\n\r\na\r\n0123456789\r\n");
	end_faulty(c, 200);
}

/* /close-delimited: a whole head without a length; the body ends at the
 * close (RFC 9112 6.3): complete, not a fault. */
static void handle_close_delimited(conn_t *c)
{
	buf_puts(&c->out, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
	                  "Connection: close\r\n\r\nthe body ends at the close\n");
	end_faulty(c, 200);
}

/* /huge-header?size=BYTES: a 200 whose X-Huge header value is that long
 * (default 200 KiB), beyond what clients buffer for one header; with
 * status (/huge-header?status&size=N) the status line's reason phrase is
 * that long instead. */
static void handle_huge_header(conn_t *c)
{
	bool ok = true;
	uint64_t size = query_u64(c->req.query, "size", 200 * 1024, 16 * 1024 * 1024, &ok);
	char *in_status = query_param(c->req.query, "status");
	if (!ok) {
		free(in_status);
		respond_html_message(c, 400, "usage: /huge-header?[status&]size=BYTES");
		return;
	}
	buf_puts(&c->out, in_status ? "HTTP/1.1 200 "
	                            : "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nX-Huge: ");
	buf_reserve(&c->out, (size_t)size);
	memset(c->out.data + c->out.len, in_status ? 'O' : 'h', (size_t)size);
	c->out.len += (size_t)size;
	free(in_status);
	buf_puts(&c->out, "\r\nContent-Length: 3\r\nConnection: close\r\n\r\nok\n");
	c->close_after = true;
	if (c->logged)
		log_set_status(c->log_seq, 200);
}

static void handle_echo(conn_t *c)
{
	const request_t *r = &c->req;
	buf_t b = { 0 };
	buf_puts(&b, "{\"method\":");
	json_string(&b, r->method);
	buf_puts(&b, ",\"path\":");
	json_string(&b, r->path);
	buf_puts(&b, ",\"query\":");
	json_string(&b, r->query);
	buf_printf(&b, ",\"version\":\"HTTP/1.%d\",\"headers\":{", r->version_minor);
	/* One key per header name (first spelling seen); repeated headers
     * are joined with ", " as RFC 9110 5.3 allows. */
	bool first = true;
	for (int i = 0; i < r->header_count; i++) {
		bool seen_before = false;
		for (int j = 0; j < i && !seen_before; j++)
			seen_before = strcasecmp(r->headers[j].name, r->headers[i].name) == 0;
		if (seen_before)
			continue;
		buf_t value = { 0 };
		for (int j = i; j < r->header_count; j++) {
			if (strcasecmp(r->headers[j].name, r->headers[i].name) != 0)
				continue;
			if (value.len)
				buf_puts(&value, ", ");
			buf_puts(&value, r->headers[j].value);
		}
		if (!first)
			buf_putc(&b, ',');
		first = false;
		json_string(&b, r->headers[i].name);
		buf_putc(&b, ':');
		json_string_n(&b, value.data ? value.data : "", value.len);
		buf_free(&value);
	}
	buf_puts(&b, "},\"body\":");
	json_string_n(&b, r->body.data ? r->body.data : "", r->body.len);
	buf_printf(&b, ",\"body_length\":%zu}\n", r->body.len);
	respond_buf(c, 200, "application/json", &b, NULL);
	buf_free(&b);
}

static void handle_latin1(conn_t *c)
{
	static const char body[] =
	        "<!DOCTYPE html>\n<html><head><meta charset=\"iso-8859-1\">"
	        "<title>Caf\xe9 Latin-1</title></head>\n<body>\n<h1>Caf\xe9</h1>\n"
	        "<p>Un caf\xe9 cr\xe8me et une cr\xeape, s'il vous pla\xeet. Prix: 5\xa0\xa3.</p>\n"
	        "</body></html>\n";
	respond(c, 200, "text/html; charset=iso-8859-1", body, sizeof body - 1, NULL);
}

static void handle_stats(conn_t *c)
{
	buf_t b = { 0 };
	buf_printf(&b,
	           "{\"max_connections\":%" PRId64 ",\"connections\":%" PRId64
	           ",\"max_inflight\":%" PRId64 ",\"inflight\":%" PRId64 ",\"requests\":%" PRId64
	           ",\"paths\":{",
	           stats.max_connections, stats.connections, stats.max_inflight, stats.inflight,
	           stats.requests);
	bool first = true;
	for (size_t i = 0; i < stats.paths.cap; i++) {
		if (!stats.paths.slots[i].key)
			continue;
		if (!first)
			buf_putc(&b, ',');
		first = false;
		json_string(&b, stats.paths.slots[i].key);
		buf_printf(&b, ":%" PRId64, stats.paths.slots[i].value);
	}
	buf_puts(&b, "},\"hosts\":{");
	first = true;
	for (size_t i = 0; i < stats.host_max_inflight.cap; i++) {
		const strmap_slot_t *slot = &stats.host_max_inflight.slots[i];
		if (!slot->key)
			continue;
		if (!first)
			buf_putc(&b, ',');
		first = false;
		json_string(&b, slot->key);
		buf_printf(&b, ":{\"max_inflight\":%" PRId64 "}", slot->value);
	}
	buf_puts(&b, "}}\n");
	respond_buf(c, 200, "application/json", &b, NULL);
	buf_free(&b);
}

static uint64_t session_requests; /* /account/expire (below) */

/* Zeroes counters and state.  Connections and requests open right now
 * stay accounted (they will be uncounted when they end), so the maxima
 * restart from the current values. */
static void handle_stats_reset(conn_t *c)
{
	stats.max_connections = stats.connections;
	stats.max_inflight = stats.inflight;
	stats.requests = 0;
	strmap_clear(&stats.paths);
	strmap_clear(&stats.flaky);
	strmap_clear(&stats.ratelimit);
	strmap_clear(&stats.unreliable);
	strmap_clear(&stats.crowded);
	bucket_count = 0;
	session_requests = 0;
	strmap_clear(&stats.host_max_inflight);
	for (size_t i = 0; i < stats.host_inflight.cap; i++) {
		const strmap_slot_t *slot = &stats.host_inflight.slots[i];
		bool inserted;
		if (slot->key && slot->value > 0)
			*strmap_value(&stats.host_max_inflight, slot->key, &inserted) = slot->value;
	}
	log_clear();
	respond(c, 200, "application/json", "{}\n", 3, NULL);
}

static void handle_log(conn_t *c)
{
	buf_t b = { 0 };
	buf_putc(&b, '[');
	for (uint64_t seq = log_first; seq < log_next; seq++) {
		const log_entry_t *e = &log_ring[seq % LOG_CAPACITY];
		buf_printf(&b, "%s\n{\"t_ms\":%.3f,\"host\":", seq == log_first ? "" : ",",
		           e->t_ms);
		json_string(&b, e->host);
		buf_puts(&b, ",\"method\":");
		json_string(&b, e->method);
		buf_puts(&b, ",\"path\":");
		json_string(&b, e->target);
		buf_puts(&b, ",\"agent\":");
		json_string(&b, e->agent);
		buf_printf(&b, ",\"headers\":%s,\"status\":%d}", e->header_names, e->status);
	}
	buf_puts(&b, "]\n");
	respond_buf(c, 200, "application/json", &b, NULL);
	buf_free(&b);
}

/* ------------------------------------------------------------------ */
/* Static files (--root)                                               */
/* ------------------------------------------------------------------ */

static const char *content_type_for(const char *path)
{
	static const struct {
		const char *ext, *type;
	} types[] = {
		{ "html", "text/html" },        { "htm", "text/html" },
		{ "css", "text/css" },          { "js", "text/javascript" },
		{ "json", "application/json" }, { "txt", "text/plain; charset=utf-8" },
		{ "png", "image/png" },         { "jpg", "image/jpeg" },
		{ "jpeg", "image/jpeg" },       { "svg", "image/svg+xml" },
		{ "xml", "application/xml" },   { "gif", "image/gif" },
		{ "ttf", "font/ttf" },          { "woff2", "font/woff2" },
	};
	const char *slash = strrchr(path, '/');
	const char *dot = strrchr(slash ? slash : path, '.');
	if (dot)
		for (size_t i = 0; i < sizeof types / sizeof *types; i++)
			if (strcasecmp(dot + 1, types[i].ext) == 0)
				return types[i].type;
	return "application/octet-stream";
}

static bool path_has_dotdot(const char *path)
{
	for (const char *p = path; p && *p;) {
		const char *end = strchr(p, '/');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		if (len == 2 && p[0] == '.' && p[1] == '.')
			return true;
		p = end ? end + 1 : NULL;
	}
	return false;
}

static bool read_whole_file(const char *path, buf_t *out)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	struct stat st;
	bool ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
	          (uint64_t)st.st_size <= MAX_ROOT_FILE_BYTES;
	/* Regular files on local disk: a blocking read is fine here. */
	while (ok) {
		buf_reserve(out, 64 * 1024);
		ssize_t n = read(fd, out->data + out->len, out->cap - out->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			ok = n == 0;
			break;
		}
		out->len += (size_t)n;
		if (out->len > MAX_ROOT_FILE_BYTES)
			ok = false;
	}
	close(fd);
	return ok;
}

/* FILE?fail=K: the first K requests of that path and query answer 503, as
 * /flaky does, so that a page or a requisite of a --root site fails once
 * and is fetched whole by a retry (test/crawl-requisites.bats).  Returns
 * whether it answered. */
static bool root_file_fails(conn_t *c, const char *file)
{
	bool ok = true, inserted;
	uint64_t fail = query_u64(c->req.query, "fail", 0, UINT32_MAX, &ok);
	struct stat st;
	if (!ok || fail == 0 || stat(file, &st) != 0)
		return false;
	buf_t key = { 0 };
	buf_printf(&key, "root:%s?%s", c->req.path, c->req.query);
	int64_t *seen = strmap_value(&stats.flaky, key.data, &inserted);
	buf_free(&key);
	if ((uint64_t)++ * seen > fail)
		return false;
	respond_text(c, 503, "root file failure\n");
	return true;
}

/* Serves the request from --root if it names a file there. */
static bool serve_root_file(conn_t *c)
{
	if (!root_dir)
		return false;
	size_t decoded_len;
	char *decoded = percent_decode(c->req.path, strlen(c->req.path), false, &decoded_len);
	bool handled = false;
	if (decoded_len != strlen(decoded) || decoded[0] != '/') {
		free(decoded);
		return false;
	}
	if (path_has_dotdot(decoded)) {
		respond_html_message(c, 403, "'..' is not allowed in paths.");
		free(decoded);
		return true;
	}
	buf_t full = { 0 };
	buf_printf(&full, "%s%s", root_dir, decoded);
	struct stat st;
	if (stat(full.data, &st) == 0 && S_ISDIR(st.st_mode)) {
		if (decoded[strlen(decoded) - 1] != '/') {
			/* Redirect so relative links inside index.html resolve. */
			buf_t location = { 0 };
			buf_printf(&location, "%s/%s%s", c->req.path, *c->req.query ? "?" : "",
			           c->req.query);
			respond_redirect(c, 301, location.data);
			buf_free(&location);
			handled = true;
		} else {
			buf_puts(&full, "index.html");
		}
	}
	buf_t body = { 0 };
	if (!handled && root_file_fails(c, full.data)) {
		handled = true;
	} else if (!handled && read_whole_file(full.data, &body)) {
		/* A web font is loaded across origins only with CORS's
		 * consent, which font hosts give (test/crawl-requisites.bats). */
		const char *type = content_type_for(full.data);
		respond_buf(c, 200, type, &body,
		            strncmp(type, "font/", 5) == 0 ? "Access-Control-Allow-Origin: *\r\n"
		                                           : NULL);
		handled = true;
	}
	buf_free(&body);
	buf_free(&full);
	free(decoded);
	return handled;
}

/* ------------------------------------------------------------------ */
/* Conditional requests and repeated header fields                     */
/* ------------------------------------------------------------------ */

/* The Last-Modified of every /conditional/ID: 2026-11-01 00:00:00 UTC. */
#define CONDITIONAL_MTIME ((time_t)1793491200)

/* /conditional/ID: a page with ETag "ID-v1" and a fixed Last-Modified; 304
 * when If-None-Match names that tag (or is "*"), else when
 * If-Modified-Since is not before Last-Modified (RFC 9110 13.1.1, 13.1.3:
 * If-Modified-Since is ignored when If-None-Match is sent). */
static void handle_conditional(conn_t *c, const char *id)
{
	char date[40], etag[160], extra[320];
	format_http_date(CONDITIONAL_MTIME, date);
	snprintf(etag, sizeof etag, "\"%.128s-v1\"", id);
	snprintf(extra, sizeof extra, "ETag: %s\r\nLast-Modified: %s\r\n", etag, date);
	const char *inm = request_header(&c->req, "If-None-Match");
	const char *ims = request_header(&c->req, "If-Modified-Since");
	bool fresh = false;
	if (inm) {
		fresh = strcmp(inm, "*") == 0 || strstr(inm, etag) != NULL;
	} else if (ims) {
		struct tm tm = { 0 };
		const char *end = strptime(ims, "%a, %d %b %Y %H:%M:%S GMT", &tm);
		fresh = end && *end == '\0' && timegm(&tm) >= CONDITIONAL_MTIME;
	}
	if (fresh) {
		respond(c, 304, NULL, "", 0, extra);
		return;
	}
	char body[256];
	int n = snprintf(body, sizeof body,
	                 "<!doctype html><title>conditional %.128s</title><p>version 1</p>\n", id);
	respond(c, 200, "text/html; charset=utf-8", body, (size_t)n, extra);
}

/* /set-cookie?c=SPEC[&d=SPEC]: a Set-Cookie field per parameter (SPEC as
 * the field's value: "name=value; Path=/; Max-Age=60"), and the Cookie
 * field the request carried as the body (empty: none). */
static void handle_set_cookie(conn_t *c)
{
	buf_t head = { 0 };
	static const char *const params[] = { "c", "d" };
	for (size_t i = 0; i < 2; i++) {
		char *spec = query_param(c->req.query, params[i]);
		if (spec && !strpbrk(spec, "\r\n"))
			buf_printf(&head, "Set-Cookie: %s\r\n", spec);
		free(spec);
	}
	const char *sent = request_header(&c->req, "Cookie");
	respond(c, 200, "text/plain; charset=utf-8", sent ? sent : "", sent ? strlen(sent) : 0,
	        head.len ? head.data : NULL);
	buf_free(&head);
}

/* The value of cookie name in the request's Cookie field (malloced), or
 * NULL. */
static char *request_cookie(conn_t *c, const char *name)
{
	const char *field = request_header(&c->req, "Cookie");
	size_t n = strlen(name);
	for (const char *p = field; p && *p;) {
		while (*p == ' ' || *p == ';')
			p++;
		const char *end = strchr(p, ';');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		if (len > n && strncmp(p, name, n) == 0 && p[n] == '=')
			return xstrndup(p + n + 1, len - n - 1);
		p += len;
	}
	return NULL;
}

/* A site behind a login (sessions, sc-fetch(1) "Forms"):
 *   GET /login     a form posting to /login: a hidden csrf field, user,
 *                  pass (type password) and a submit button; sets the
 *                  cookie csrf to the token
 *   POST /login    user=me, pass=secret and csrf equal to the csrf
 *                  cookie: 302 to /account, setting session=ok-me-K (a
 *                  new K each login; else 403)
 *   GET /account   200 "welcome me" with a live session, else 302 to
 *                  /login; session=ok-me lives for ever
 *   GET /account/p/N (1 <= N <= 20) the members' pages, a tree: each
 *                  links to p/2N and p/2N+1; the same session rule
 *   GET /account/expire?n=N  sessions of later logins live for N
 *                  requests to /account* (0: for ever; /stats/reset: 0),
 *                  as a site whose sessions expire mid-crawl */
static uint64_t login_tokens;
static uint64_t session_serial;
#define SESSIONS_KEPT 64
static struct {
	uint64_t serial, left; /* left: requests; UINT64_MAX: no limit */
} sessions[SESSIONS_KEPT];

static void handle_login(conn_t *c)
{
	if (strcmp(c->req.method, "POST") != 0) {
		char token[32], head[96];
		snprintf(token, sizeof token, "t%" PRIu64, ++login_tokens);
		snprintf(head, sizeof head, "Set-Cookie: csrf=%s; Path=/\r\n", token);
		buf_t b = { 0 };
		buf_printf(&b,
		           "<!DOCTYPE html>\n<html><head><title>Log in</title></head><body>\n"
		           "<form method=\"post\" action=\"/login\">\n"
		           "<input type=\"hidden\" name=\"csrf\" value=\"%s\">\n"
		           "<input name=\"user\"> <input type=\"password\" name=\"pass\">\n"
		           "<button type=\"submit\" name=\"go\" value=\"in\">Log in</button>\n"
		           "</form></body></html>\n",
		           token);
		respond(c, 200, "text/html; charset=utf-8", b.data, b.len, head);
		buf_free(&b);
		return;
	}
	const char *body = c->req.body.data ? c->req.body.data : "";
	char *user = query_param(body, "user"), *pass = query_param(body, "pass");
	char *csrf = query_param(body, "csrf"), *want = request_cookie(c, "csrf");
	bool ok = user && pass && csrf && want && strcmp(user, "me") == 0 &&
	          strcmp(pass, "secret") == 0 && strcmp(csrf, want) == 0;
	if (ok) {
		buf_t extra = { 0 };
		uint64_t k = ++session_serial;
		sessions[k % SESSIONS_KEPT].serial = k;
		sessions[k % SESSIONS_KEPT].left = session_requests ? session_requests : UINT64_MAX;
		buf_printf(&extra,
		           "Location: /account\r\nSet-Cookie: session=ok-me-%" PRIu64
		           "; Path=/; HttpOnly\r\n",
		           k);
		respond(c, 302, "text/plain; charset=utf-8", "logged in\n", 10, extra.data);
		buf_free(&extra);
	} else {
		respond_text(c, 403, "bad login\n");
	}
	free(user);
	free(pass);
	free(csrf);
	free(want);
}

/* Whether the request carries a live session; one of its requests used. */
static bool session_live(conn_t *c)
{
	char *session = request_cookie(c, "session");
	bool live = session && strcmp(session, "ok-me") == 0;
	if (session && !live && strncmp(session, "ok-me-", 6) == 0) {
		char *end;
		uint64_t k = strtoull(session + 6, &end, 10);
		if (*end == '\0' && k > 0 && sessions[k % SESSIONS_KEPT].serial == k &&
		    sessions[k % SESSIONS_KEPT].left > 0) {
			live = true;
			if (sessions[k % SESSIONS_KEPT].left != UINT64_MAX)
				sessions[k % SESSIONS_KEPT].left--;
		}
	}
	free(session);
	return live;
}

static void handle_account(conn_t *c, const char *sub)
{
	bool ok = true;
	if (sub && strcmp(sub, "expire") == 0) {
		uint64_t n = query_u64(c->req.query, "n", 0, UINT32_MAX, &ok);
		if (!ok) {
			respond_html_message(c, 400, "usage: /account/expire?n=N");
			return;
		}
		session_requests = n;
		respond_text(c, 200, "sessions of later logins expire\n");
		return;
	}
	unsigned long page = 0;
	if (sub) {
		char *end;
		page = strncmp(sub, "p/", 2) == 0 ? strtoul(sub + 2, &end, 10) : 0;
		if (page < 1 || page > 20 || *end) {
			respond_not_found(c);
			return;
		}
	}
	if (!session_live(c)) {
		respond_redirect(c, 302, "/login");
		return;
	}
	if (!page) {
		respond_text(c, 200, "welcome me\n");
		return;
	}
	buf_t b = { 0 };
	buf_printf(&b, "<!DOCTYPE html>\n<html><head><title>members %lu</title></head><body>\n",
	           page);
	buf_printf(&b, "<h1>Members' page %lu</h1>\n<ul>\n", page);
	for (unsigned long next = 2 * page; next <= 2 * page + 1 && next <= 20; next++)
		buf_printf(&b, "<li><a href=\"/account/p/%lu\">page %lu</a></li>\n", next, next);
	buf_puts(&b, "</ul>\n<p><a href=\"/logout\">log out</a></p></body></html>\n");
	respond_buf(c, 200, "text/html; charset=utf-8", &b, NULL);
	buf_free(&b);
}

/* A cookie wall (sessions, sc-crawl(7) LOGIN):
 *   GET /wall/N (1 <= N <= 5) without the cookie consent=yes: the wall,
 *                  200 at the same URL (as such walls answer), a form
 *                  posting accept=yes to /wall/consent and no link; with
 *                  it, page N, which links to /wall/N+1
 *   POST /wall/consent  accept=yes: 302 to next, setting consent=yes */
static void handle_wall(conn_t *c, const char *sub)
{
	buf_t b = { 0 };
	if (strcmp(sub, "consent") == 0) {
		const char *body = c->req.body.data ? c->req.body.data : "";
		char *accept = query_param(body, "accept"), *next = query_param(body, "next");
		if (strcmp(c->req.method, "POST") == 0 && accept && strcmp(accept, "yes") == 0 &&
		    next && next[0] == '/' && !strpbrk(next, "\r\n")) {
			buf_printf(&b, "Location: %s\r\nSet-Cookie: consent=yes; Path=/wall\r\n",
			           next);
			respond(c, 302, "text/plain; charset=utf-8", "thank you\n", 10, b.data);
		} else
			respond_text(c, 400, "no consent\n");
		free(accept);
		free(next);
		buf_free(&b);
		return;
	}
	char *end;
	unsigned long page = strtoul(sub, &end, 10);
	if (page < 1 || page > 5 || *end) {
		respond_not_found(c);
		return;
	}
	char *consent = request_cookie(c, "consent");
	if (!consent || strcmp(consent, "yes") != 0)
		buf_printf(
		        &b,
		        "<!DOCTYPE html>\n<html><head><title>Cookies</title></head><body>\n"
		        "<p>We use cookies.</p>\n<form method=\"post\" action=\"/wall/consent\">\n"
		        "<input type=\"hidden\" name=\"next\" value=\"/wall/%lu\">\n"
		        "<button name=\"accept\" value=\"yes\">Accept</button>\n"
		        "<button name=\"accept\" value=\"no\">Refuse</button>\n"
		        "</form></body></html>\n",
		        page);
	else {
		buf_printf(&b,
		           "<!DOCTYPE html>\n<html><head><title>wall %lu</title></head><body>\n",
		           page);
		buf_printf(&b, "<h1>Behind the wall, page %lu</h1>\n", page);
		if (page < 5)
			buf_printf(&b, "<a href=\"/wall/%lu\">next</a>\n", page + 1);
		buf_puts(&b, "</body></html>\n");
	}
	free(consent);
	respond_buf(c, 200, "text/html; charset=utf-8", &b, NULL);
	buf_free(&b);
}

/* /repeat-headers: a field sent twice and two Set-Cookie fields. */
static void handle_repeat_headers(conn_t *c)
{
	static const char text[] = "repeated header fields\n";
	respond(c, 200, "text/plain; charset=utf-8", text, sizeof text - 1,
	        "X-Multi: a\r\nSet-Cookie: a=1; Path=/\r\nX-Multi: b\r\n"
	        "Set-Cookie: b=2\r\n");
}

/* ------------------------------------------------------------------ */
/* Per-host robots.txt (--robots-dir)                                  */
/* ------------------------------------------------------------------ */

/* With --robots-dir DIR, GET /robots.txt with "Host: H[:port]" is answered
 * from DIR/H (200 with its bytes), or DIR/H.status (that status instead;
 * a 3xx goes to the URL in DIR/H.location), after DIR/H.delay milliseconds
 * when that file is there.  A host with none of these files is answered as
 * the host "default"; with no default files either, 404.  The files are
 * read at each request, so a test can change them between requests. */
static const char *robots_dir;

/* This request's host, its port left out, in name[]; false when it
 * cannot name a file (none, a dot first, a slash). */
static bool host_name(conn_t *c, char *name, size_t size)
{
	const char *host = request_header(&c->req, "Host");
	size_t n = host ? strlen(host) : 0;
	const char *bracket = host ? strrchr(host, ']') : NULL;
	const char *colon = host ? strrchr(host, ':') : NULL;
	if (colon && (!bracket || colon > bracket))
		n = (size_t)(colon - host);
	if (n == 0 || n >= size || host[0] == '.' || memchr(host, '/', n))
		return false;
	snprintf(name, size, "%.*s", (int)n, host);
	return true;
}

/* The name robots files of this request's host start with, in name[]. */
static void robots_name(conn_t *c, char *name, size_t size)
{
	if (host_name(c, name, size)) {
		static const char *const suffixes[] = { "", ".status", ".delay" };
		for (size_t i = 0; i < 3; i++) {
			buf_t path = { 0 };
			buf_printf(&path, "%s/%s%s", robots_dir, name, suffixes[i]);
			bool there = access(path.data, F_OK) == 0;
			buf_free(&path);
			if (there)
				return;
		}
	}
	snprintf(name, size, "default");
}

/* The contents of DIR/name+suffix, NUL-terminated, or false. */
static bool robots_file(const char *name, const char *suffix, buf_t *out)
{
	buf_t path = { 0 };
	buf_printf(&path, "%s/%s%s", robots_dir, name, suffix);
	bool ok = read_whole_file(path.data, out);
	buf_free(&path);
	if (ok)
		buf_putc(out, '\0');
	return ok;
}

static void finish_robots(conn_t *c)
{
	char name[256];
	buf_t status = { 0 }, body = { 0 };
	robots_name(c, name, sizeof name);
	if (robots_file(name, ".status", &status)) {
		uint64_t code = 0;
		status.data[strcspn(status.data, " \t\r\n")] = '\0';
		if (!parse_u64_str(status.data, &code) || code < 100 || code > 599) {
			respond_html_message(c, 500, "bad robots .status file");
		} else if (code >= 300 && code <= 399 && robots_file(name, ".location", &body)) {
			body.data[strcspn(body.data, "\r\n")] = '\0';
			respond_redirect(c, (int)code, body.data);
		} else {
			char text[64];
			snprintf(text, sizeof text, "%d %s\n", (int)code, reason_phrase((int)code));
			respond_text(c, (int)code, text);
		}
	} else if (robots_file(name, "", &body)) {
		respond(c, 200, "text/plain", body.data, body.len - 1, NULL);
	} else {
		respond_not_found(c);
	}
	buf_free(&status);
	buf_free(&body);
}

/* With --robots-dir, DIR/H.unreliable holding P (1..100): P% of the
 * /page/ requests on host H answer 503, whatever the pace, counted as
 * /unreliable counts them (a flaky backend behind a whole site). */
static bool page_fails(conn_t *c)
{
	char name[256];
	buf_t text = { 0 };
	uint64_t percent = 0;
	if (!robots_dir || !host_name(c, name, sizeof name) ||
	    !robots_file(name, ".unreliable", &text))
		return false;
	text.data[strcspn(text.data, " \t\r\n")] = '\0';
	bool fails = parse_u64_str(text.data, &percent) && percent >= 1 && percent <= 100 &&
	             unreliable_fails(c, "page", percent);
	buf_free(&text);
	return fails;
}

static void handle_robots(conn_t *c)
{
	char name[256];
	buf_t delay = { 0 };
	uint64_t ms = 0;
	robots_name(c, name, sizeof name);
	bool delayed = robots_file(name, ".delay", &delay);
	if (delayed)
		delay.data[strcspn(delay.data, " \t\r\n")] = '\0';
	if (delayed && parse_u64_str(delay.data, &ms) && ms > 0 && ms <= MAX_DELAY_MS)
		timer_arm(c, TIMER_ROBOTS, (int64_t)ms);
	else
		finish_robots(c);
	buf_free(&delay);
}

/* ------------------------------------------------------------------ */
/* Dispatch                                                            */
/* ------------------------------------------------------------------ */

/* Observation endpoints: they must not disturb what they observe. */
static bool is_observer_path(const char *path)
{
	return strcmp(path, "/stats") == 0 || strcmp(path, "/stats/reset") == 0 ||
	       strcmp(path, "/log") == 0;
}

/* If path is prefix + something non-empty, returns the something. */
static const char *path_arg(const char *path, const char *prefix)
{
	size_t n = strlen(prefix);
	if (strncmp(path, prefix, n) == 0 && path[n] != '\0')
		return path + n;
	return NULL;
}

static void route_request(conn_t *c)
{
	const char *path = c->req.path;
	const char *arg;
	if (strcmp(path, "/stats") == 0)
		handle_stats(c);
	else if (strcmp(path, "/stats/reset") == 0)
		handle_stats_reset(c);
	else if (strcmp(path, "/log") == 0)
		handle_log(c);
	else if (robots_dir && strcmp(path, "/robots.txt") == 0)
		handle_robots(c);
	else if ((arg = path_arg(path, "/page/")) && page_fails(c))
		respond(c, 503, "text/plain; charset=utf-8", "the site's backend failed\n", 26,
		        NULL);
	else if (arg)
		handle_page(c, arg);
	else if ((arg = path_arg(path, "/conditional/")))
		handle_conditional(c, arg);
	else if (strcmp(path, "/repeat-headers") == 0)
		handle_repeat_headers(c);
	else if (strcmp(path, "/set-cookie") == 0)
		handle_set_cookie(c);
	else if (strcmp(path, "/login") == 0)
		handle_login(c);
	else if (strcmp(path, "/account") == 0)
		handle_account(c, NULL);
	else if ((arg = path_arg(path, "/account/")))
		handle_account(c, arg);
	else if ((arg = path_arg(path, "/wall/")))
		handle_wall(c, arg);
	else if ((arg = path_arg(path, "/status/")))
		handle_status(c, arg);
	else if ((arg = path_arg(path, "/delay/")))
		handle_delay(c, arg);
	else if ((arg = path_arg(path, "/redirect/")))
		handle_redirect(c, arg);
	else if (strcmp(path, "/redirect-loop") == 0)
		respond_redirect(c, 302, "/redirect-loop");
	else if (strcmp(path, "/redirect-to") == 0)
		handle_redirect_to(c);
	else if ((arg = path_arg(path, "/flaky/")))
		handle_flaky(c, arg);
	else if ((arg = path_arg(path, "/ratelimit/")))
		handle_ratelimit(c, arg);
	else if ((arg = path_arg(path, "/bucket/")))
		handle_bucket(c, arg);
	else if ((arg = path_arg(path, "/unreliable/")))
		handle_unreliable(c, arg);
	else if (strcmp(path, "/crowded") == 0)
		handle_crowded(c);
	else if (strcmp(path, "/loaded") == 0)
		handle_loaded(c);
	else if ((arg = path_arg(path, "/big/")))
		handle_big(c, arg);
	else if ((arg = path_arg(path, "/binary/")))
		handle_binary(c, arg);
	else if (strcmp(path, "/gzip") == 0)
		handle_gzip(c);
	else if (strcmp(path, "/zstd") == 0)
		handle_coded(c, "zstd");
	else if (strcmp(path, "/br") == 0)
		handle_coded(c, "br");
	else if (strcmp(path, "/slow") == 0)
		handle_slow(c);
	else if (strcmp(path, "/reset") == 0)
		handle_reset(c);
	else if (strcmp(path, "/hang") == 0)
		c->hang = true;
	else if (strcmp(path, "/echo") == 0)
		handle_echo(c);
	else if (strcmp(path, "/latin1") == 0)
		handle_latin1(c);
	else if (strcmp(path, "/cut-head") == 0)
		handle_cut_head(c);
	else if (strcmp(path, "/short-body") == 0)
		handle_short_body(c);
	else if (strcmp(path, "/chunked-cut") == 0)
		handle_chunked_cut(c);
	else if (strcmp(path, "/close-delimited") == 0)
		handle_close_delimited(c);
	else if (strcmp(path, "/huge-header") == 0)
		handle_huge_header(c);
	else if (serve_root_file(c))
		;
	else if (strcmp(path, "/") == 0)
		handle_index(c);
	else
		respond_not_found(c);
}

/* Per-host in-flight accounting, keyed by the Host header, so that a
 * crawl over 127.0.0.x origins can check each host's concurrency cap. */
static void host_inflight_begin(conn_t *c, const char *host)
{
	c->inflight_host = xstrdup(host ? host : "");
	bool inserted;
	int64_t now = ++*strmap_value(&stats.host_inflight, c->inflight_host, &inserted);
	int64_t *max = strmap_value(&stats.host_max_inflight, c->inflight_host, &inserted);
	if (now > *max)
		*max = now;
}

/* The request's header names, in order, as a JSON array (malloced): what
 * /log shows, so that a test can tell that no header reached the server
 * that the client was not to send (one smuggled in through a line break). */
static char *header_names_json(const request_t *r)
{
	buf_t b = { 0 };

	buf_putc(&b, '[');
	for (int i = 0; i < r->header_count; i++) {
		if (i > 0)
			buf_putc(&b, ',');
		json_string(&b, r->headers[i].name);
	}
	buf_putc(&b, ']');
	return b.data;
}

/* A complete request arrived: account for it, then answer it. */
static void dispatch_request(conn_t *c)
{
	request_t *r = &c->req;
	c->phase = PHASE_RESPOND;
	c->close_after = !r->keep_alive;
	c->reset_after = c->hang = false;
	if (is_observer_path(r->path)) {
		conn_uncount(c);
	} else {
		conn_count(c);
		c->inflight = true;
		if (++stats.inflight > stats.max_inflight)
			stats.max_inflight = stats.inflight;
		stats.requests++;
		bool inserted;
		++*strmap_value(&stats.paths, r->path, &inserted);
		host_inflight_begin(c, request_header(r, "Host"));
		c->log_seq =
		        log_append(c->head_rx_ns, request_header(r, "Host"), r->method, r->target,
		                   request_header(r, "User-Agent"), header_names_json(r));
		c->logged = true;
	}
	route_request(c);
}

/* Moves the connection's request forward with the input it has.
 * Returns true if a request (or an error response) was dispatched. */
static bool advance_request(conn_t *c)
{
	if (c->phase == PHASE_HEAD) {
		int status = parse_request_head(c);
		if (status == PARSE_NEED_MORE)
			return false;
		if (status != PARSE_OK) {
			respond_protocol_error(c, status, "Malformed or oversized request.");
			return true;
		}
		c->phase = PHASE_BODY;
		if (request_wants_continue(c))
			buf_puts(&c->out, "HTTP/1.1 100 Continue\r\n\r\n");
	}
	if (c->phase == PHASE_BODY) {
		int status = read_request_body(c);
		if (status == PARSE_NEED_MORE)
			return false;
		if (status != PARSE_OK) {
			respond_protocol_error(c, status, "Malformed or oversized request body.");
			return true;
		}
		dispatch_request(c);
		return true;
	}
	return false;
}

/* Does all the work the connection's current state allows: parse and
 * answer requests (pipelined ones in order), send output. */
static void conn_pump(conn_t *c)
{
	/* Each round completes one request; input is finite, so is this. */
	for (int round = 0; round < 100000 && !c->dead; round++) {
		bool was_waiting = c->phase == PHASE_HEAD || c->phase == PHASE_BODY;
		if (was_waiting && !advance_request(c)) {
			conn_flush(c); /* maybe a 100 Continue */
			break;
		}
		conn_flush(c);
		if (c->dead || c->phase != PHASE_HEAD)
			break;
	}
	if (!c->dead && c->peer_closed &&
	    (c->phase == PHASE_HEAD || c->phase == PHASE_BODY || c->phase == PHASE_CLOSING ||
	     c->hang))
		conn_kill(c, false); /* the client went away */
	conn_update_interest(c);
}

/* ------------------------------------------------------------------ */
/* Event handlers                                                      */
/* ------------------------------------------------------------------ */

/* recv(2) that also says when the kernel received the bytes
 * (SO_TIMESTAMPNS, set at accept), on clock_ns's clock, in *rx_ns (0 when
 * it does not say).  The log's times are those: the server's own turn to
 * run, which a loaded machine delays by milliseconds, must not move them,
 * or a test of the spacing between two requests would measure it. */
// NOLINTNEXTLINE(readability-non-const-parameter): recvmsg writes it, through iov
static ssize_t recv_stamped(int fd, char *data, size_t len, int64_t *rx_ns)
{
	struct iovec iov = { .iov_base = data, .iov_len = len };
	union {
		char buf[CMSG_SPACE(sizeof(struct timespec))];
		struct cmsghdr align;
	} control;
	struct msghdr msg = { .msg_iov = &iov,
		              .msg_iovlen = 1,
		              .msg_control = control.buf,
		              .msg_controllen = sizeof control.buf };
	ssize_t n = recvmsg(fd, &msg, 0);

	*rx_ns = 0;
	for (struct cmsghdr *cm = n > 0 ? CMSG_FIRSTHDR(&msg) : NULL; cm;
	     cm = CMSG_NXTHDR(&msg, cm)) {
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_TIMESTAMPNS)
			continue;
		struct timespec rx, real;
		memcpy(&rx, CMSG_DATA(cm), sizeof rx);
		clock_gettime(CLOCK_REALTIME, &real);
		int64_t ago = ((int64_t)real.tv_sec - rx.tv_sec) * 1000000000 +
		              (real.tv_nsec - rx.tv_nsec);
		if (ago >= 0)
			*rx_ns = clock_ns() - ago;
	}
	return n;
}

static void conn_on_readable(conn_t *c)
{
	for (int i = 0; i < READS_PER_EVENT; i++) {
		if (c->in_start > 0 && c->in.cap - c->in.len < READ_CHUNK) {
			/* compact before growing */
			memmove(c->in.data, c->in.data + c->in_start, c->in.len - c->in_start);
			c->in.len -= c->in_start;
			c->in_start = 0;
		}
		buf_reserve(&c->in, READ_CHUNK);
		bool at_request_start = conn_input_available(c) == 0;
		int64_t rx_ns;
		ssize_t n =
		        recv_stamped(c->fd, c->in.data + c->in.len, c->in.cap - c->in.len, &rx_ns);
		if (n > 0) {
			if (at_request_start)
				c->head_rx_ns = rx_ns;
			c->in.len += (size_t)n;
			if (c->phase == PHASE_CLOSING)
				conn_consume_input(c, conn_input_available(c));
			if (conn_input_available(c) >= MAX_INPUT_BACKLOG)
				break;
		} else if (n == 0) {
			c->peer_closed = true;
			break;
		} else if (errno == EINTR) {
			continue;
		} else if (errno == EAGAIN || errno == EWOULDBLOCK) {
			break;
		} else {
			conn_kill(c, false);
			return;
		}
	}
	if (c->phase == PHASE_CLOSING && !c->peer_closed) {
		conn_update_interest(c);
		return;
	}
	conn_pump(c);
}

static void conn_on_event(conn_t *c, uint32_t events)
{
	if (events & EPOLLERR) {
		conn_kill(c, false);
		return;
	}
	if (events & (EPOLLIN | EPOLLHUP))
		conn_on_readable(c);
	if (!c->dead && (events & EPOLLOUT))
		conn_pump(c);
}

static void conn_on_timer(conn_t *c, enum timer_kind kind)
{
	switch (kind) {
	case TIMER_DELAY:
		finish_delay(c);
		break;
	case TIMER_DRIP:
		drip_one_byte(c);
		break;
	case TIMER_ROBOTS:
		finish_robots(c);
		break;
	case TIMER_RESET:
		conn_kill(c, true);
		return;
	case TIMER_LINGER:
		conn_kill(c, false);
		return;
	case TIMER_NONE:
		return;
	}
	conn_pump(c);
}

static void run_due_timers(void)
{
	int64_t now = clock_ns();
	/* Only timers due now; ones re-armed by handlers wait for the next turn. */
	for (size_t budget = timer_count; budget > 0 && timer_count > 0; budget--) {
		conn_t *c = timer_heap[0];
		if (c->timer_due_ns > now)
			break;
		enum timer_kind kind = c->timer_kind;
		timer_cancel(c);
		conn_on_timer(c, kind);
	}
}

/* Sheds a pending connection when out of descriptors, so the listening
 * socket doesn't stay readable forever. */
static void shed_connection(int listen_fd)
{
	if (reserve_fd >= 0) {
		close(reserve_fd);
		int fd = accept(listen_fd, NULL, NULL);
		if (fd >= 0)
			close(fd);
		reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	}
}

static void accept_connections(int listen_fd)
{
	for (int i = 0; i < ACCEPTS_PER_EVENT; i++) {
		// cppcheck-suppress nullPointer ; accept4(2) takes NULL when the address is unwanted
		int fd = accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EMFILE || errno == ENFILE) {
				fprintf(stderr, "sc-testserver: out of file descriptors, dropping "
				                "a connection\n");
				shed_connection(listen_fd);
			} else if (errno == EINTR || errno == ECONNABORTED) {
				continue;
			}
			return;
		}
		int one = 1;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one);
		conn_t *c = xcalloc(1, sizeof *c);
		c->fd = fd;
		c->timer_index = NO_TIMER;
		c->events = EPOLLIN;
		struct epoll_event ev = { .events = EPOLLIN, .data.ptr = c };
		if (epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &ev) != 0) {
			close(fd);
			free(c);
			continue;
		}
		c->next = live_conns;
		if (live_conns)
			live_conns->prev = c;
		live_conns = c;
	}
}

/* ------------------------------------------------------------------ */
/* Startup                                                             */
/* ------------------------------------------------------------------ */

static void usage(FILE *out)
{
	fputs("usage: sc-testserver [--root DIR] [--robots-dir DIR] [--port N] [--port-file FILE]\n"
	      "                     [--loopback N]\n"
	      "\n"
	      "Fixture HTTP/1.1 server for the sc test suites. Listens on 127.0.0.1 only,\n"
	      "on port N (default 0: the OS picks one), prints the port on stdout and, with\n"
	      "--port-file, writes it to FILE atomically. Exits 0 on SIGTERM or SIGINT.\n"
	      "--loopback N also listens on 127.0.0.2 ... 127.0.0.N (same port, N <= 32),\n"
	      "each a separate origin; /stats \"hosts\" has each Host's max_inflight.\n"
	      "\n"
	      "Endpoints:\n"
	      "  /page/N[?size=BYTES]      generated HTML page with links\n"
	      "  /status/CODE              that status (200-599)\n"
	      "  /delay/MS                 200 after MS milliseconds\n"
	      "  /redirect/N               302 chain down to /redirect/0\n"
	      "  /redirect-loop            302 to itself\n"
	      "  /redirect-to?url=U&status=302\n"
	      "  /flaky/ID?fail=K&status=503&retry_after=S\n"
	      "  /ratelimit/ID?after=S&date=0|1\n"
	      "  /bucket/ID?rate=N&burst=B&retry_after=S  token bucket; bare 429 beyond\n"
	      "                            it (Retry-After: S with retry_after); ?stats=1\n"
	      "  /loaded?base=MS           answers after MS x requests in flight to the Host\n"
	      "  /unreliable/ID?percent=P&fail=503|reset  exactly P in 100 requests\n"
	      "                            for ID on a Host fail, scattered by a hash\n"
	      "  /crowded?gap=MS           503 within MS of the Host's last /crowded request\n"
	      "  /big/BYTES[?chunked=1]    streamed text body\n"
	      "  /binary/BYTES             bytes that are not UTF-8\n"
	      "  /gzip[?size=N]            gzip-encoded HTML (stored deflate blocks)\n"
	      "  /br[?size=N]              HTML, brotli-encoded (uncompressed meta-blocks)\n"
	      "  /zstd[?size=N]            HTML, zstd-encoded (raw blocks)\n"
	      "                            when Accept-Encoding names br\n"
	      "  /slow?bytes=N&interval=MS body dripped one byte at a time\n"
	      "  /reset                    partial body, then TCP RST\n"
	      "  /hang                     never answers\n"
	      "  /echo                     the request as JSON\n"
	      "  /latin1                   ISO-8859-1 HTML page\n"
	      "  /conditional/ID           ETag \"ID-v1\" and a fixed Last-Modified; 304\n"
	      "                            to If-None-Match / If-Modified-Since\n"
	      "  /repeat-headers           X-Multi twice, Set-Cookie twice\n"
	      "  /set-cookie?c=SPEC&d=SPEC a Set-Cookie: SPEC per parameter; the body is\n"
	      "                            the request's Cookie field\n"
	      "  /login, /account          a login form (csrf cookie and field); POST\n"
	      "                            user=me pass=secret: 302 to /account with a\n"
	      "                            session cookie; /account needs it\n"
	      "  /account/p/N              members' pages 1-20 (a tree), behind the login\n"
	      "  /account/expire?n=N       later logins' sessions live for N requests\n"
	      "  /wall/N, /wall/consent    a cookie wall (pages 1-5 behind consent=yes)\n"
	      "  /cut-head[?close=fin|rst] a header block cut mid-line, then FIN or RST\n"
	      "  /short-body[?close=...]   Content-Length 100, ten bytes, then the close\n"
	      "  /chunked-cut[?close=...]  a chunk and no terminating chunk, then the close\n"
	      "  /close-delimited          a whole head, a body ended by the close (ok)\n"
	      "  /huge-header[?size=N]     a 200 with an N-byte header (200 KiB)\n"
	      "  /huge-header?status[&size=N]  the same length in the status line\n"
	      "  /stats, /stats/reset, /log  observation (not counted themselves)\n"
	      "  /robots.txt               with --robots-dir DIR, per Host H: DIR/H, or\n"
	      "                            DIR/H.status (+ DIR/H.location for 3xx), after\n"
	      "                            DIR/H.delay ms; else DIR/default*; else 404;\n"
	      "                            DIR/H.unreliable P: P in 100 of H's /page/\n"
	      "                            requests answer 503 (as /unreliable counts)\n"
	      "  anything else             a file under --root DIR, or 404; with ?fail=K\n"
	      "                            its first K requests answer 503\n",
	      out);
}

static void usage_error(const char *fmt, const char *arg)
{
	fputs("sc-testserver: ", stderr);
	fprintf(stderr, fmt, arg);
	fputs("\nTry 'sc-testserver --help'.\n", stderr);
	exit(2);
}

static void raise_fd_limit(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == rl.rlim_max)
		return;
	rlim_t wanted = rl.rlim_max;
	if (wanted == RLIM_INFINITY || wanted > 1048576)
		wanted = 1048576; /* the kernel's usual nr_open */
	rl.rlim_cur = wanted;
	if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
		fprintf(stderr, "sc-testserver: cannot raise RLIMIT_NOFILE: %s\n", strerror(errno));
}

static int open_listener(uint32_t address, int port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		die("socket: %s", strerror(errno));
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	addr.sin_addr.s_addr = htonl(address);
	if (bind(fd, (struct sockaddr *)&addr, sizeof addr) != 0)
		die("bind 127.0.0.%d:%d: %s", (int)(address & 0xff), port, strerror(errno));
	if (listen(fd, LISTEN_BACKLOG) != 0)
		die("listen: %s", strerror(errno));
	socklen_t len = sizeof addr;
	if (getsockname(fd, (struct sockaddr *)&addr, &len) != 0)
		die("getsockname: %s", strerror(errno));
	listen_port = ntohs(addr.sin_port);
	return fd;
}

/* Write-to-temp-then-rename, so a poller never reads a partial port. */
static void write_port_file(const char *path, int port)
{
	buf_t tmp = { 0 };
	buf_printf(&tmp, "%s.tmp.%ld", path, (long)getpid());
	FILE *f = fopen(tmp.data, "w");
	if (!f)
		die("cannot write %s: %s", tmp.data, strerror(errno));
	fprintf(f, "%d\n", port);
	if (fclose(f) != 0 || rename(tmp.data, path) != 0)
		die("cannot write %s: %s", path, strerror(errno));
	buf_free(&tmp);
}

static int open_signalfd(void)
{
	sigset_t mask;
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	/* A shell starts background jobs with SIGINT ignored, and an ignored
     * signal is discarded before signalfd can see it: restore the default
     * (harmless, since the signals stay blocked). */
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	if (sigprocmask(SIG_BLOCK, &mask, NULL) != 0)
		die("sigprocmask: %s", strerror(errno));
	int fd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	if (fd < 0)
		die("signalfd: %s", strerror(errno));
	return fd;
}

static void epoll_add(int fd, void *tag)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = tag };
	if (epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &ev) != 0)
		die("epoll_ctl: %s", strerror(errno));
}

/* Frees everything so leak checkers see a clean exit. */
static void shutdown_server(int signal_fd)
{
	while (live_conns)
		conn_kill(live_conns, false);
	free_graveyard();
	free(timer_heap);
	log_clear();
	free(log_ring);
	strmap_clear(&stats.paths);
	strmap_clear(&stats.flaky);
	strmap_clear(&stats.ratelimit);
	strmap_clear(&stats.host_inflight);
	strmap_clear(&stats.host_max_inflight);
	close(signal_fd);
	for (int i = 0; i < listen_count; i++)
		close(listen_fds[i]);
	close(epoll_fd);
	if (reserve_fd >= 0)
		close(reserve_fd);
}

int main(int argc, char **argv)
{
	static const struct option options[] = {
		{ "root", required_argument, NULL, 'r' },
		{ "robots-dir", required_argument, NULL, 'R' },
		{ "port", required_argument, NULL, 'p' },
		{ "port-file", required_argument, NULL, 'f' },
		{ "loopback", required_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *port_file = NULL;
	int port = 0, loopback = 1;
	opterr = 0;
	for (;;) {
		int opt = getopt_long(argc, argv, ":h", options, NULL);
		if (opt == -1)
			break;
		uint64_t value;
		struct stat st;
		switch (opt) {
		case 'r':
			if (stat(optarg, &st) != 0 || !S_ISDIR(st.st_mode))
				usage_error("--root: not a directory: %s", optarg);
			root_dir = optarg;
			break;
		case 'R':
			if (stat(optarg, &st) != 0 || !S_ISDIR(st.st_mode))
				usage_error("--robots-dir: not a directory: %s", optarg);
			robots_dir = optarg;
			break;
		case 'p':
			if (!parse_u64_str(optarg, &value) || value > 65535)
				usage_error("--port: not a port number: %s", optarg);
			port = (int)value;
			break;
		case 'f':
			port_file = optarg;
			break;
		case 'l':
			if (!parse_u64_str(optarg, &value) || value < 1 || value > MAX_LISTENERS)
				usage_error("--loopback: not a number from 1 to 32: %s", optarg);
			loopback = (int)value;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case ':':
			usage_error("option requires an argument: %s", argv[optind - 1]);
			break;
		default:
			usage_error("unknown option: %s", argv[optind - 1]);
		}
	}
	if (optind < argc)
		usage_error("unexpected argument: %s", argv[optind]);

	signal(SIGPIPE, SIG_IGN);
	crc32_init();
	raise_fd_limit();
	server_start_ns = clock_ns();
	reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	int signal_fd = open_signalfd();
	listen_fds[0] = open_listener(INADDR_LOOPBACK, port);
	for (listen_count = 1; listen_count < loopback; listen_count++)
		listen_fds[listen_count] =
		        open_listener(INADDR_LOOPBACK + (uint32_t)listen_count, listen_port);
	epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (epoll_fd < 0)
		die("epoll_create1: %s", strerror(errno));
	for (int i = 0; i < listen_count; i++)
		epoll_add(listen_fds[i], &listen_fds[i]);
	epoll_add(signal_fd, &signal_tag);

	if (port_file)
		write_port_file(port_file, listen_port);
	printf("%d\n", listen_port);
	fflush(stdout);

	bool running = true;
	while (running) {
		struct epoll_event events[256];
		int n = epoll_wait(epoll_fd, events, 256, timer_wait_ms());
		if (n < 0 && errno != EINTR)
			die("epoll_wait: %s", strerror(errno));
		for (int i = 0; i < n; i++) {
			void *tag = events[i].data.ptr;
			if ((int *)tag >= listen_fds && (int *)tag < listen_fds + listen_count)
				accept_connections(*(int *)tag);
			else if (tag == &signal_tag)
				running = false;
			else
				conn_on_event(tag, events[i].events);
		}
		run_due_timers();
		free_graveyard();
	}
	shutdown_server(signal_fd);
	return 0;
}
