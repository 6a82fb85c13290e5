// SPDX-License-Identifier: MIT
/*
 * 'ibemu traffic --plot FILE': a study's SVG (traffic_plot.c) written
 * where the user asked, as the user it runs as,
 * through a temporary file in the same directory renamed into place, so a
 * reader never sees half an image. A PNG is the SVG converted by
 * rsvg-convert (package librsvg2-bin) or ImageMagick's convert, run once
 * when the study ends; the loop waits for it (a fraction of a second),
 * as it waits for the report.
 */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "buf.h"
#include "traffic.h"

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n > m && !strcasecmp(s + n - m, suffix);
}

/* Whether 'prog' is an executable in $PATH. */
static int in_path(const char *prog)
{
	const char *path = getenv("PATH"), *p, *colon;
	char full[4096];

	for (p = path ? path : "/usr/bin:/bin"; *p; p = colon + 1) {
		colon = strchr(p, ':');
		if (!colon)
			colon = p + strlen(p);
		snprintf(full, sizeof(full), "%.*s/%s", (int)(colon - p),
			 colon > p ? p : ".", prog);
		if (!access(full, X_OK))
			return 1;
		if (!*colon)
			break;
	}
	return 0;
}

/* The PNG converter to use, or NULL if none is installed. */
static const char *png_tool(void)
{
	if (in_path("rsvg-convert"))
		return "rsvg-convert";
	if (in_path("convert"))
		return "convert";
	return NULL;
}

/* Whether the plot's directory takes files: told before a long study
 * runs rather than after. */
static int dir_writable(const char *path, struct ibemu_buf *err)
{
	const char *slash = strrchr(path, '/'); /* absolute: there is one */
	int len = slash > path ? (int)(slash - path) : 1;
	char dir[4096];

	snprintf(dir, sizeof(dir), "%.*s", len, path);
	if (!access(dir, W_OK | X_OK))
		return 1;
	ibemu_buf_printf(err, "traffic: --plot %s: %s", path, strerror(errno));
	return 0;
}

int ibemu_traffic_plot_check(const char *path, struct ibemu_buf *err)
{
	if (path[0] != '/') {
		ibemu_buf_printf(err,
				 "traffic: --plot '%s': give an absolute path "
				 "(the daemon writes it)",
				 path);
		return 2;
	}
	/* Room for the temporary names beside it. */
	if (strlen(path) > 4000) {
		ibemu_buf_puts(err, "traffic: --plot: the path is too long");
		return 2;
	}
	if (!ends_with(path, ".svg") && !ends_with(path, ".png")) {
		ibemu_buf_printf(err,
				 "traffic: --plot %s: the name must end in "
				 ".svg or .png",
				 path);
		return 2;
	}
	if (!dir_writable(path, err))
		return 1;
	if (ends_with(path, ".png") && !png_tool()) {
		ibemu_buf_printf(err,
				 "traffic: --plot %s: a PNG needs rsvg-convert "
				 "(package librsvg2-bin) or ImageMagick's "
				 "convert, and neither is installed; write "
				 "an .svg instead",
				 path);
		return 2;
	}
	return 0;
}

/* Writes 'b' to a new temporary file beside 'path'; its name in 'tmp'. */
static int write_tmp(const char *path, const struct ibemu_buf *b, char *tmp,
		     size_t len, const char *ext, struct ibemu_buf *err)
{
	size_t off = 0;
	mode_t mask;
	ssize_t n;
	int fd;

	snprintf(tmp, len, "%s.tmp-XXXXXX%s", path, ext);
	fd = mkstemps(tmp, (int)strlen(ext));
	if (fd < 0) {
		ibemu_buf_printf(err, "traffic: --plot %s: %s", path,
				 strerror(errno));
		return 1;
	}
	while (off < b->len) {
		n = write(fd, b->data + off, b->len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ibemu_buf_printf(err, "traffic: --plot %s: %s", path,
					 strerror(errno));
			close(fd);
			unlink(tmp);
			return 1;
		}
		off += (size_t)n;
	}
	/* mkstemps() makes it 0600; an image is as readable as any file
	 * the user creates (the umask read back at once: one thread). */
	mask = umask(022);
	umask(mask);
	if (fchmod(fd, 0666 & ~mask) || close(fd)) {
		ibemu_buf_printf(err, "traffic: --plot %s: %s", path,
				 strerror(errno));
		unlink(tmp);
		return 1;
	}
	return 0;
}

/* Runs the converter from 'svg' to 'png'; 0, or 1 with the reason. */
static int convert(const char *path, const char *svg, const char *png,
		   struct ibemu_buf *err)
{
	const char *tool = png_tool();
	char in[4300], out[4300];
	char *argv[8];
	int status, ret;
	pid_t pid;

	if (!tool) {
		ibemu_buf_printf(err,
				 "traffic: --plot %s: rsvg-convert (package "
				 "librsvg2-bin) and convert are gone",
				 path);
		return 1;
	}
	if (!strcmp(tool, "rsvg-convert")) {
		argv[0] = (char *)"rsvg-convert";
		argv[1] = (char *)"--format=png";
		argv[2] = (char *)"--output";
		argv[3] = (char *)png;
		argv[4] = (char *)svg;
		argv[5] = NULL;
	} else {
		/* ImageMagick: formats as prefixes, whatever the names. */
		snprintf(in, sizeof(in), "svg:%s", svg);
		snprintf(out, sizeof(out), "png:%s", png);
		argv[0] = (char *)"convert";
		argv[1] = in;
		argv[2] = out;
		argv[3] = NULL;
	}
	ret = posix_spawnp(&pid, tool, NULL, NULL, argv, environ);
	if (ret) {
		ibemu_buf_printf(err, "traffic: --plot %s: %s: %s", path, tool,
				 strerror(ret));
		return 1;
	}
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			ibemu_buf_printf(err, "traffic: --plot %s: %s: %s",
					 path, tool, strerror(errno));
			return 1;
		}
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		ibemu_buf_printf(err,
				 "traffic: --plot %s: %s failed (status "
				 "0x%x)%s",
				 path, tool, (unsigned)status,
				 strcmp(tool, "convert")
					 ? ""
					 : "; rsvg-convert (package "
					   "librsvg2-bin) is the converter "
					   "ibemu tries first");
		return 1;
	}
	return 0;
}

int ibemu_traffic_plot_file(const struct ibemu_traffic *tr, const char *path,
			    struct ibemu_buf *err)
{
	char svg[4200], png[4200];
	struct ibemu_buf b;
	mode_t mask;
	int ret, fd;

	ibemu_buf_init(&b);
	ret = ibemu_traffic_plot_svg(tr, NULL, &b);
	if (ret) {
		ibemu_buf_printf(err, "traffic: --plot %s: %s", path,
				 strerror(-ret));
		ibemu_buf_fini(&b);
		return 1;
	}
	ret = write_tmp(path, &b, svg, sizeof(svg), ".svg", err);
	ibemu_buf_fini(&b);
	if (ret)
		return ret;
	if (ends_with(path, ".png")) {
		/* The converter writes a name we reserved. */
		snprintf(png, sizeof(png), "%s.tmp-XXXXXX.png", path);
		fd = mkstemps(png, 4);
		if (fd < 0) {
			ibemu_buf_printf(err, "traffic: --plot %s: %s", path,
					 strerror(errno));
			unlink(svg);
			return 1;
		}
		close(fd);
		ret = convert(path, svg, png, err);
		unlink(svg);
		if (ret) {
			unlink(png);
			return ret;
		}
		mask = umask(022);
		umask(mask);
		chmod(png, 0666 & ~mask);
		memcpy(svg, png, sizeof(svg));
	}
	if (rename(svg, path)) {
		ibemu_buf_printf(err, "traffic: --plot %s: %s", path,
				 strerror(errno));
		unlink(svg);
		return 1;
	}
	return 0;
}
