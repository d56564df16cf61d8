/* hash: FNV-1a, the one string hash of sc's hash tables (the origin table
 * of the fetch engine, sc-parse's link and string sets).  Not for anything
 * an adversary may choose to collide on where that would matter: the
 * tables using it stay correct under collisions, only slower. */
#ifndef SC_HASH_H
#define SC_HASH_H

#include <stddef.h>
#include <stdint.h>

#define SC_FNV1A_OFFSET 14695981039346656037ULL
#define SC_FNV1A_PRIME 1099511628211ULL

/* FNV-1a (64-bit) of n bytes. */
static inline uint64_t sc_fnv1a(const void *data, size_t n)
{
	const unsigned char *p = data;
	uint64_t h = SC_FNV1A_OFFSET;

	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * SC_FNV1A_PRIME;
	return h;
}

/* FNV-1a (64-bit) of a NUL-terminated string. */
static inline uint64_t sc_fnv1a_str(const char *s)
{
	uint64_t h = SC_FNV1A_OFFSET;

	while (*s)
		h = (h ^ (unsigned char)*s++) * SC_FNV1A_PRIME;
	return h;
}

#endif
