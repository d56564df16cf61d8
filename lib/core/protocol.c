/* protocol: the one rule for a value on a protocol's line (protocol.h). */
#include "core/protocol.h"

#include <string.h>

bool sc_protocol_value_ok(const char *s, size_t n)
{
	return !memchr(s, '\r', n) && !memchr(s, '\n', n) && !memchr(s, '\0', n);
}
