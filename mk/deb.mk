# Debian packages (issue 23): binary packages built with Debian's own tools
# from the debian/ folder kept in the repository.  Included by the
# Makefile, whose variables it reads (VERSION, DEB_BUILD_TOOLS).
#
#   make deb    pack the tracked files as `make dist` does, build them with
#               `dpkg-buildpackage -b -us -uc` in a temporary folder (so the
#               checkout stays clean), copy the .deb files into build/deb/
#               and run lintian on them: an error fails (mk/deb.sh)
#
# DEB_BUILD_OPTIONS is passed on (e.g. nocheck skips the smoke test of
# debian/rules); parallel=2 is added when it names no parallel=.

DEB_OUT = build/deb

.PHONY: deb deb-deps

deb-deps:
	@sh test/deps.sh $(DEB_BUILD_TOOLS)

deb: deb-deps
	@sh mk/deb.sh $(VERSION) $(DEB_OUT)
