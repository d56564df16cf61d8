// What the independent WARC checks of the suite share (warc-digests.mjs,
// warc-responses.mjs): base32 as WARC digests write it, and a chunked
// transfer coding removed.  Shares no code with sc.
export const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

// RFC 4648 base32 without padding, as "sha1:" digests are written.
export function base32(bytes) {
	let bits = 0, acc = 0, out = '';
	for (const b of bytes) {
		acc = (acc << 8) | b;
		bits += 8;
		while (bits >= 5) {
			out += ALPHABET[(acc >>> (bits - 5)) & 31];
			bits -= 5;
		}
		acc &= (1 << bits) - 1;
	}
	if (bits > 0) out += ALPHABET[(acc << (5 - bits)) & 31];
	return out;
}

// The data of a chunked body's chunks.  A body cut short (WARC-Truncated)
// ends inside a chunk or its size line: its payload is what came of the
// chunks' data.
export function dechunk(bytes) {
	const parts = [];
	let i = 0;
	while (i < bytes.length) {
		const nl = bytes.indexOf(10, i);
		if (nl < 0) break;
		const size = parseInt(Buffer.from(bytes.subarray(i, nl)).toString('latin1'), 16);
		if (Number.isNaN(size)) throw new Error('bad chunk size');
		i = nl + 1;
		if (size === 0) break;
		parts.push(bytes.subarray(i, i + size));
		i += size + 2;
	}
	return Buffer.concat(parts);
}
