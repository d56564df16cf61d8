/* libFuzzer target: the line reader (lib/lines.c) under random chunking.
 *
 * The input: two bytes that pick the maximum line length (SC_MAX_LINE,
 * 64 to 4159 bytes, so the too-long path is reached), a seed for the
 * chunk sizes, then the stream.  The reader reads from a fake descriptor:
 * this file defines read(), which for FAKE_FD hands out the stream in
 * chunks of 1 to 64 KiB (sizes drawn from the seed; libFuzzer's own files
 * go to the real read through the system call).
 * The promise checked: the reader returns the same lines whatever the
 * chunking, and they are the lines a plain split of the stream gives: LF
 * ends a line, a CR before it is dropped, a last line without LF counts,
 * and a line longer than the maximum is flagged too_long with its first
 * min(maximum, 4096) bytes kept. */
#include <errno.h>
#include <string.h>
#include <sys/syscall.h>

#include "fuzz.h"
#include "record/lines.h"

#define FAKE_FD 1000
#define KEEP 4096

static const uint8_t *stream;
static size_t stream_len, stream_at;
static uint64_t rng;

/* glibc names the parameters with reserved identifiers; not copied here. */
// NOLINTNEXTLINE(readability-inconsistent-declaration-parameter-name)
ssize_t read(int fd, void *buf, size_t count)
{
	if (fd != FAKE_FD)
		return syscall(SYS_read, fd, buf, count);
	if (stream_at == stream_len)
		return 0;
	rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
	/* Mostly small chunks, sometimes large ones. */
	size_t chunk = 1 + (rng >> 33) % ((rng >> 20 & 3) == 0 ? 65536 : 16);
	if (chunk > count)
		chunk = count;
	if (chunk > stream_len - stream_at)
		chunk = stream_len - stream_at;
	memcpy(buf, stream + stream_at, chunk);
	stream_at += chunk;
	return (ssize_t)chunk;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sc_line line;
	char maxs[16];

	if (size < 3)
		return 0;
	size_t max = 64 + ((size_t)data[0] << 4 | (data[1] & 0xf));
	snprintf(maxs, sizeof(maxs), "%zu", max);
	setenv("SC_MAX_LINE", maxs, 1);
	rng = data[2];
	stream = data + 3;
	stream_len = size - 3;
	stream_at = 0;

	struct sc_lines *r = sc_lines_open(FAKE_FD, "<fuzz>");
	if (sc_lines_max(r) != max)
		fuzz_fail("SC_MAX_LINE=%s not honoured", maxs);
	size_t at = 0, number = 0;
	int rc;
	while ((rc = sc_lines_next(r, &line)) > 0) {
		if (at >= stream_len)
			fuzz_fail("a line past the end of the stream");
		const uint8_t *nl = memchr(stream + at, '\n', stream_len - at);
		size_t len = nl ? (size_t)(nl - (stream + at)) : stream_len - at;
		const uint8_t *want = stream + at;
		size_t want_len = len > 0 && want[len - 1] == '\r' ? len - 1 : len;
		bool too_long = len > max;
		if (too_long)
			want_len = max < KEEP ? max : KEEP;
		if (line.number != ++number)
			fuzz_fail("line %zu numbered %zu", number, line.number);
		if (line.too_long != too_long)
			fuzz_fail("line %zu of %zu bytes (max %zu): too_long %d", number, len, max,
			          line.too_long);
		if (line.len != want_len || memcmp(line.text, want, want_len) != 0 ||
		    line.text[line.len] != '\0')
			fuzz_fail("line %zu of %zu bytes (max %zu, too_long %d): %zu bytes read",
			          number, len, max, too_long, line.len);
		at += len + (nl != NULL);
	}
	if (rc < 0)
		fuzz_fail("read error: %s", strerror(errno));
	if (at != stream_len)
		fuzz_fail("the lines stop at byte %zu of %zu", at, stream_len);
	sc_lines_close(r);
	return 0;
}
