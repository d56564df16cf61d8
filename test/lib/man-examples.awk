# Prints the examples of a man page (mdoc): each .Bd -literal block and each
# .Dl line of its EXAMPLES section, with roff's escapes undone, followed by
# a line holding only "%%" that ends the example.
/^\.Sh EXAMPLES/ { in_examples = 1; next }
/^\.Sh / { in_examples = 0 }
!in_examples { next }
/^\.Bd -literal/ { in_block = 1; next }
/^\.Ed/ { if (in_block) print "%%"; in_block = 0; next }
/^\.Dl / { sub(/^\.Dl /, ""); print unroff($0); print "%%"; next }
in_block { print unroff($0) }

function unroff(s) {
	gsub(/\\e/, "\\", s)
	gsub(/\\\(aq/, "'", s)
	gsub(/\\-/, "-", s)
	gsub(/\\&/, "", s)
	return s
}
