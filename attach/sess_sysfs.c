// SPDX-License-Identifier: MIT
/*
 * The sysfs tree of a bound HCA, as the kernel lays it out, kept under
 * the fabric's runtime directory: sysfs/<host>/class/infiniband/<host>/
 * and sysfs/<host>/class/infiniband_verbs/. 'ibemu exec --host' points
 * SYSFS_PATH at sysfs/<host> (ibemu's libibverbs honours it, as
 * rdma-core's does), so that tools and MPI stacks that read sysfs
 * (Open MPI's openib BTL, UCX, scripts) see the HCA the process runs on.
 * Written when a process binds to the HCA (CA_QUERY: 'ibemu exec', and
 * every ibv_get_device_list()); a port's state files again when its
 * logical state changes (the transport's PORT_ACTIVE and PORT_ERR), and
 * on each bind, so that they say what Get(PortInfo) says now. Each file
 * is written aside and renamed into place: a reader never sees one half
 * written. The server removes the whole tree when it stops.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sess.h"

#define SYSFS_DIR "sysfs"

/* The kernel's names (drivers/infiniband/core/sysfs.c). */
static const char *const state_names[] = {
	"NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER",
};
static const char *const phys_names[] = {
	"<unknown>",
	"Sleep",
	"Polling",
	"Disabled",
	"PortConfigurationTraining",
	"LinkUp",
	"LinkErrorRecovery",
	"Phy Test",
};

/* mkdir -p of 'path' (modified in place, restored). */
static int mkdirs(char *path)
{
	char *slash;

	for (slash = strchr(path + 1, '/'); slash;
	     slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		if (mkdir(path, 0755) && errno != EEXIST) {
			*slash = '/';
			return -errno;
		}
		*slash = '/';
	}
	return mkdir(path, 0755) && errno != EEXIST ? -errno : 0;
}

/* Writes 'dir'/'name' (its directories made), a line from 'fmt'. */
static int put(const char *dir, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int put(const char *dir, const char *name, const char *fmt, ...)
{
	char path[IBEMU_PATH_MAX + 256], tmp[IBEMU_PATH_MAX + 272], line[128];
	va_list ap;
	int fd, len, ok;

	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >=
		    (int)sizeof(path) ||
	    snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	va_start(ap, fmt);
	len = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (len < 0 || len >= (int)sizeof(line))
		return -EINVAL;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0444);
	if (fd < 0 && errno == ENOENT) {
		*strrchr(path, '/') = '\0';
		if (mkdirs(path))
			return -errno;
		snprintf(path, sizeof(path), "%s/%s", dir, name);
		fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0444);
	}
	if (fd < 0)
		return -errno;
	ok = write(fd, line, (size_t)len) == len;
	close(fd);
	if (!ok || rename(tmp, path)) {
		unlink(tmp);
		return -EIO;
	}
	return 0;
}

/* A GUID as sysfs prints it: four groups of four hex digits. */
static void guid_str(uint64_t g, char *out, size_t len)
{
	snprintf(out, len, "%04x:%04x:%04x:%04x", (unsigned)(g >> 48) & 0xffff,
		 (unsigned)(g >> 32) & 0xffff, (unsigned)(g >> 16) & 0xffff,
		 (unsigned)g & 0xffff);
}

/* "100 Gb/sec (4X EDR)", as the kernel's port 'rate' file. */
static void rate_str(const struct ibemu_sess_port_attr *a, char *out,
		     size_t len)
{
	static const struct {
		uint8_t ext, base, fdr10;
		unsigned tenths;
		const char *name;
	} speeds[] = {
		{8, 0, 0, 1000, "NDR"},	 {4, 0, 0, 500, "HDR"},
		{2, 0, 0, 250, "EDR"},	 {1, 0, 0, 140, "FDR"},
		{0, 0, 1, 100, "FDR10"}, {0, 4, 0, 100, "QDR"},
		{0, 2, 0, 50, "DDR"},	 {0, 1, 0, 25, "SDR"},
	};
	unsigned lanes, i, tenths;

	switch (a->link_width_active) {
	case 2:
		lanes = 4;
		break;
	case 4:
		lanes = 8;
		break;
	case 8:
		lanes = 12;
		break;
	case 16:
		lanes = 2;
		break;
	default:
		lanes = 1;
	}
	for (i = 0; i < IBEMU_ARRAY_SIZE(speeds) - 1; i++)
		if ((speeds[i].ext &&
		     a->link_speed_ext_active & speeds[i].ext) ||
		    (speeds[i].fdr10 && a->fdr10_active) ||
		    (speeds[i].base && !a->link_speed_ext_active &&
		     !a->fdr10_active && a->link_speed_active & speeds[i].base))
			break;
	tenths = speeds[i].tenths * lanes;
	snprintf(out, len, "%u%s Gb/sec (%uX %s)", tenths / 10,
		 tenths % 10 ? ".5" : "", lanes, speeds[i].name);
}

/* sysfs/<host>: the root SYSFS_PATH names. */
static int root_dir(struct ibemu_sess_server *s, uint32_t node, char *out,
		    size_t len)
{
	const char *host = s->d->topo->nodes[node].name;

	if (strchr(host, '/') || snprintf(out, len, "%s/%s/%s", s->d->paths.dir,
					  SYSFS_DIR, host) >= (int)len)
		return -EINVAL;
	return 0;
}

/* ports/<n>/: what changes with the port's state. */
static int port_state_files(const char *dir,
			    const struct ibemu_sess_port_attr *a)
{
	char rate[48];
	int ret = 0;

	rate_str(a, rate, sizeof(rate));
	ret |= put(dir, "state", "%u: %s\n", a->state,
		   a->state < IBEMU_ARRAY_SIZE(state_names)
			   ? state_names[a->state]
			   : "UNKNOWN");
	ret |= put(dir, "phys_state", "%u: %s\n", a->phys_state,
		   a->phys_state < IBEMU_ARRAY_SIZE(phys_names)
			   ? phys_names[a->phys_state]
			   : "<unknown>");
	ret |= put(dir, "lid", "0x%x\n", a->lid);
	ret |= put(dir, "sm_lid", "0x%x\n", a->sm_lid);
	ret |= put(dir, "sm_sl", "%u\n", a->sm_sl);
	ret |= put(dir, "lid_mask_count", "%u\n", a->lmc);
	ret |= put(dir, "cap_mask", "0x%08x\n", a->capability_mask);
	ret |= put(dir, "rate", "%s\n", rate);
	return ret;
}

/* ports/<n>/: the rest (link layer, GID 0, the P_Key table). */
static int port_table_files(const char *dir,
			    const struct ibemu_sess_port_attr *a)
{
	uint64_t g[2] = {a->gid_prefix, a->port_guid};
	char name[32];
	unsigned i;
	int ret = 0;

	ret |= put(dir, "link_layer", "InfiniBand\n");
	ret |= put(dir, "gids/0", "%04x:%04x:%04x:%04x:%04x:%04x:%04x:%04x\n",
		   (unsigned)(g[0] >> 48) & 0xffff,
		   (unsigned)(g[0] >> 32) & 0xffff,
		   (unsigned)(g[0] >> 16) & 0xffff, (unsigned)g[0] & 0xffff,
		   (unsigned)(g[1] >> 48) & 0xffff,
		   (unsigned)(g[1] >> 32) & 0xffff,
		   (unsigned)(g[1] >> 16) & 0xffff, (unsigned)g[1] & 0xffff);
	for (i = 0; i < a->npkeys && i < IBEMU_SESS_PORT_PKEYS; i++) {
		snprintf(name, sizeof(name), "pkeys/%u", i);
		ret |= put(dir, name, "0x%04x\n", a->pkeys[i]);
	}
	return ret;
}

static int port_files(struct ibemu_sess_server *s, uint32_t node,
		      const char *ibdev, unsigned p, int full)
{
	struct ibemu_sess_port_attr a;
	char dir[IBEMU_PATH_MAX + 128];
	int ret;

	if (ibemu__sess_port_attr_fill(s, node, p, &a))
		return -EINVAL;
	snprintf(dir, sizeof(dir), "%s/ports/%u", ibdev, p);
	ret = port_state_files(dir, &a);
	if (full)
		ret |= port_table_files(dir, &a);
	return ret;
}

/* class/infiniband/<host>/ and class/infiniband_verbs/uverbs-<host>/. */
static int device_files(struct ibemu_sess_server *s, uint32_t node,
			const char *root, const char *ibdev)
{
	const struct ibemu_topo_node *n = &s->d->topo->nodes[node];
	char guid[24], verbs[IBEMU_PATH_MAX + 128];
	int ret = 0;

	guid_str(n->guid, guid, sizeof(guid));
	ret |= put(ibdev, "node_guid", "%s\n", guid);
	guid_str(n->sysimage_guid ? n->sysimage_guid : n->guid, guid,
		 sizeof(guid));
	ret |= put(ibdev, "sys_image_guid", "%s\n", guid);
	ret |= put(ibdev, "node_type", "1: CA\n");
	ret |= put(ibdev, "node_desc", "%s\n", n->name);
	/* As ibv_query_device() says them (verbs/query.c). */
	ret |= put(ibdev, "fw_ver", "ibemu %s\n", IBEMU_VERSION);
	ret |= put(ibdev, "hca_type", "MT%u\n", n->device_id);
	ret |= put(ibdev, "board_id", "IBEMU_%04x\n", n->device_id);
	/* The verbs device: the name ibemu's libibverbs gives dev_name. */
	ret |= put(root, "class/infiniband_verbs/abi_version", "6\n");
	snprintf(verbs, sizeof(verbs), "%s/class/infiniband_verbs/uverbs-%s",
		 root, n->name);
	ret |= put(verbs, "ibdev", "%s\n", n->name);
	ret |= put(verbs, "abi_version", "1\n");
	ret |= put(verbs, "dev", "231:192\n");
	return ret;
}

/*
 * Brings sysfs/<host>/ up to date with the HCA 'node': everything when
 * 'full' or when it was never written, else its ports' state files.
 */
void ibemu__sess_sysfs_update(struct ibemu_sess_server *s, uint32_t node,
			      int full)
{
	const struct ibemu_topo_node *n = &s->d->topo->nodes[node];
	char root[IBEMU_PATH_MAX], ibdev[IBEMU_PATH_MAX + 64];
	struct stat st;
	unsigned p;
	int ret = 0;

	if (root_dir(s, node, root, sizeof(root)))
		return;
	snprintf(ibdev, sizeof(ibdev), "%s/class/infiniband/%s", root, n->name);
	if (stat(ibdev, &st))
		full = 1;
	if (full)
		ret |= device_files(s, node, root, ibdev);
	for (p = 1; p <= n->nports && p <= IBEMU_SESS_MAX_PORTS; p++)
		ret |= port_files(s, node, ibdev, p, full);
	if (ret && !s->sysfs_failed) {
		s->sysfs_failed = 1;
		ibemu_daemon_log(s->d,
				 "cannot write the sysfs tree of %s "
				 "under %s",
				 n->name, root);
	}
}

static int remove_cb(const char *path, const struct stat *st, int type,
		     struct FTW *ftw)
{
	(void)st;
	(void)type;
	(void)ftw;
	remove(path);
	return 0;
}

void ibemu__sess_sysfs_remove(struct ibemu_sess_server *s)
{
	char root[IBEMU_PATH_MAX + 16];

	if (snprintf(root, sizeof(root), "%s/%s", s->d->paths.dir, SYSFS_DIR) <
	    (int)sizeof(root))
		nftw(root, remove_cb, 16, FTW_DEPTH | FTW_PHYS);
}
