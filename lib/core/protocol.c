/* protocol: the one rule for a value on a protocol's line (protocol.h). */
#include "core/protocol.h"

#include <string.h>

bool sc_protocol_value_ok(const char *s, size_t n)
{
	return !memchr(s, '\r', n) && !memchr(s, '\n', n) && !memchr(s, '\0', n);
}

bool sc_protocol_request_text_ok(const char *s, size_t n, bool tab_ok)
{
	const unsigned char *p = (const unsigned char *)s;

	if (!sc_protocol_value_ok(s, n))
		return false;
	for (size_t i = 0; i < n; i++)
		if ((p[i] < 0x20 && !(tab_ok && p[i] == '\t')) || p[i] == 0x7f)
			return false;
	return true;
}

bool sc_protocol_header_name_ok(const char *name, size_t n)
{
	return n > 0 && !memchr(name, ':', n) && !memchr(name, ' ', n) &&
	       sc_protocol_request_text_ok(name, n, false);
}

bool sc_protocol_header_value_ok(const char *value, size_t n)
{
	return sc_protocol_request_text_ok(value, n, true);
}
