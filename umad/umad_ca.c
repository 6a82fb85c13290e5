// SPDX-License-Identifier: MIT
/*
 * The CA and port queries of libibumad (umad_get_ca, umad_get_port, the
 * device lists, umad_get_issm_path), answered from the daemon's CA_QUERY
 * instead of sysfs. Every process sees one CA: the HCA it is bound to,
 * under its topology name, the name libibverbs gives the device (a real
 * host names both mlx5_0). Return values follow rdma-core's libibumad
 * (umad.c) case by case.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "umad_int.h"

void ibemu__umad_ca_name(const struct ibemu_sess_ca *ca,
			 char name[UMAD_CA_NAME_LEN])
{
	/* A longer name is cut, where rdma-core would skip the CA. */
	size_t n = strnlen(ca->host, UMAD_CA_NAME_LEN - 1);

	memcpy(name, ca->host, n);
	name[n] = '\0';
}

/* NULL, "" and the old name stand for the one CA, as NULL does in
 * rdma-core for the first. */
static int is_default(const char *ca_name)
{
	return !ca_name || !*ca_name || !strcmp(ca_name, UMAD_CA_OLD_NAME);
}

int ibemu__umad_ca_named(const char *ca_name, struct ibemu_sess_ca **out)
{
	char name[UMAD_CA_NAME_LEN];

	if (ibemu__umad_query(out))
		return is_default(ca_name) ? -ENODEV : -ENOENT;
	ibemu__umad_ca_name(*out, name);
	if (is_default(ca_name) || !strcmp(ca_name, (*out)->host) ||
	    !strcmp(ca_name, name))
		return 0;
	free(*out);
	*out = NULL;
	return -ENOENT;
}

static const struct ibemu_sess_port *ca_port(const struct ibemu_sess_ca *ca,
					     int portnum)
{
	if (portnum < 1 || (unsigned)portnum > ca->nports)
		return NULL;
	return &ca->ports[portnum - 1];
}

/*
 * rdma-core's resolve_ca_port() for port 0: the first Active port, else
 * the first whose link is up, else the first not Disabled; 0 if none.
 */
static int best_port(const struct ibemu_sess_ca *ca)
{
	int up = 0, enabled = 0;
	unsigned i;

	for (i = 0; i < ca->nports; i++) {
		if (ca->ports[i].state == 4)
			return (int)i + 1;
		if (!up && ca->ports[i].phys_state == 5)
			up = (int)i + 1;
		if (!enabled && ca->ports[i].phys_state != 3)
			enabled = (int)i + 1;
	}
	return up ? up : enabled;
}

/*
 * rdma-core's resolve_ca_name(): a CA name given with a port number is
 * taken as it is (a wrong one fails later); without, the CA must exist
 * and port 0 becomes its best port. Returns 0 with *ca (free() it),
 * -ENOENT for a name that is not the CA's, or -ENODEV.
 */
static int resolve(const char *ca_name, int *portnum, struct ibemu_sess_ca **ca)
{
	int ret = ibemu__umad_ca_named(ca_name, ca);

	if (ret)
		return ret;
	if (portnum && !*portnum) {
		*portnum = best_port(*ca);
		if (!*portnum) {
			free(*ca);
			return -ENODEV;
		}
	}
	return 0;
}

UMAD_EXPORT int umad_get_cas_names(char cas[][UMAD_CA_NAME_LEN], int max)
{
	struct ibemu_sess_ca *ca;

	if (!ibemu__umad_attached())
		return 0; /* a host without devices */
	if (ibemu__umad_query(&ca))
		return -ENODEV;
	if (max >= 1)
		ibemu__umad_ca_name(ca, cas[0]);
	free(ca);
	return max < 1 ? 0 : 1;
}

UMAD_EXPORT struct umad_device_node *umad_get_ca_device_list(void)
{
	struct umad_device_node *node;
	struct ibemu_sess_ca *ca;
	char *name;

	/* No devices is NULL with errno 0; ibstat tells the two apart. */
	if (!ibemu__umad_attached()) {
		errno = 0;
		return NULL;
	}
	if (ibemu__umad_query(&ca)) {
		errno = ENODEV;
		return NULL;
	}
	node = calloc(1, sizeof(*node) + UMAD_CA_NAME_LEN);
	if (!node) {
		free(ca);
		errno = ENOMEM;
		return NULL;
	}
	name = (char *)(node + 1);
	ibemu__umad_ca_name(ca, name);
	free(ca);
	node->ca_name = name;
	errno = 0;
	return node;
}

UMAD_EXPORT void umad_free_ca_device_list(struct umad_device_node *head)
{
	struct umad_device_node *next;

	for (; head; head = next) {
		next = head->next;
		free(head);
	}
}

/*
 * Sorts the list by CA name (insertion sort: lists of CAs are short).
 * 'size' may be 0 for "count it"; the whole list is sorted either way.
 */
UMAD_EXPORT int umad_sort_ca_device_list(struct umad_device_node **head,
					 size_t size)
{
	struct umad_device_node *sorted = NULL, *node, *next, **pp;

	(void)size;
	if (!head)
		return -EINVAL;
	for (node = *head; node; node = next) {
		next = node->next;
		for (pp = &sorted;
		     *pp && strcmp((*pp)->ca_name, node->ca_name) <= 0;
		     pp = &(*pp)->next)
			;
		node->next = *pp;
		*pp = node;
	}
	*head = sorted;
	return 0;
}

static void port_fill(umad_port_t *port, const struct ibemu_sess_ca *ca,
		      const struct ibemu_sess_port *p, uint16_t *pkeys)
{
	ibemu__umad_ca_name(ca, port->ca_name);
	port->portnum = p->port_num;
	port->base_lid = p->lid;
	port->lmc = p->lmc;
	port->sm_lid = p->sm_lid;
	port->sm_sl = p->sm_sl;
	port->state = p->state;
	port->phys_state = p->phys_state;
	port->rate = p->rate;
	port->capmask = htobe32(p->capability_mask);
	port->gid_prefix = htobe64(p->gid_prefix);
	port->port_guid = htobe64(p->port_guid);
	memcpy(pkeys, p->pkeys, p->npkeys * sizeof(pkeys[0]));
	port->pkeys = pkeys;
	port->pkeys_size = p->npkeys;
	snprintf(port->link_layer, sizeof(port->link_layer), "InfiniBand");
}

/* Allocates what rdma-core's get_port() does: the P_Key array. */
static int port_get(umad_port_t *port, const struct ibemu_sess_ca *ca,
		    const struct ibemu_sess_port *p)
{
	uint16_t *pkeys;

	/* rdma-core fails a port whose sysfs lists no P_Key. */
	if (!p->npkeys)
		return -EIO;
	pkeys = calloc(p->npkeys, sizeof(*pkeys));
	if (!pkeys)
		return -EIO;
	port_fill(port, ca, p, pkeys);
	return 0;
}

static int release_port(umad_port_t *port)
{
	free(port->pkeys);
	port->pkeys = NULL;
	port->pkeys_size = 0;
	return 0;
}

static void release_ca(umad_ca_t *ca)
{
	int i;

	for (i = 0; i <= ca->numports && i < UMAD_CA_MAX_PORTS; i++) {
		if (!ca->ports[i])
			continue;
		release_port(ca->ports[i]);
		free(ca->ports[i]);
		ca->ports[i] = NULL;
	}
}

static void ca_fill(umad_ca_t *ca, const struct ibemu_sess_ca *q)
{
	memset(ca->ca_name, 0, sizeof(ca->ca_name));
	ibemu__umad_ca_name(q, ca->ca_name);
	ca->node_type = q->node_type;
	ca->numports = (int)q->nports;
	snprintf(ca->fw_ver, sizeof(ca->fw_ver), "%s", IBEMU_VERSION);
	snprintf(ca->ca_type, sizeof(ca->ca_type), "ibemu HCA");
	snprintf(ca->hw_ver, sizeof(ca->hw_ver), "0x0");
	ca->node_guid = htobe64(q->node_guid);
	ca->system_guid = htobe64(q->system_guid);
}

UMAD_EXPORT int umad_get_ca(const char *ca_name, umad_ca_t *ca)
{
	struct ibemu_sess_ca *q;
	unsigned i;
	int ret = 0;

	if (resolve(ca_name, NULL, &q))
		return -ENODEV;
	ca->numports = 0;
	memset(ca->ports, 0, sizeof(ca->ports));
	ca_fill(ca, q);
	/* An HCA has no port 0: ports[0] stays NULL, as in sysfs. */
	for (i = 0; i < q->nports; i++) {
		ca->ports[i + 1] = calloc(1, sizeof(*ca->ports[i + 1]));
		if (!ca->ports[i + 1]) {
			ret = -ENOMEM;
			break;
		}
		if (port_get(ca->ports[i + 1], q, &q->ports[i])) {
			free(ca->ports[i + 1]);
			ca->ports[i + 1] = NULL;
			ret = -EIO;
			break;
		}
	}
	free(q);
	if (ret)
		release_ca(ca);
	return ret;
}

UMAD_EXPORT int umad_release_ca(umad_ca_t *ca)
{
	if (!ca)
		return -ENODEV;
	release_ca(ca);
	return 0;
}

UMAD_EXPORT int umad_get_port(const char *ca_name, int portnum,
			      umad_port_t *port)
{
	const struct ibemu_sess_port *p;
	struct ibemu_sess_ca *q;
	int ret;

	/* rdma-core reads the sysfs port of a named CA: -EIO if absent. */
	ret = resolve(ca_name, &portnum, &q);
	if (ret == -ENOENT)
		return portnum ? -EIO : -ENODEV;
	if (ret)
		return ret;
	/* rdma-core reads the port's sysfs directory: none is -EIO. */
	p = ca_port(q, portnum);
	ret = p ? port_get(port, q, p) : -EIO;
	free(q);
	return ret;
}

UMAD_EXPORT int umad_release_port(umad_port_t *port)
{
	if (!port)
		return -ENODEV;
	return release_port(port);
}

UMAD_EXPORT int umad_get_ca_portguids(const char *ca_name, __be64 *portguids,
				      int max)
{
	struct ibemu_sess_ca *q;
	unsigned i;
	int n, ret;

	ret = ibemu__umad_ca_named(ca_name, &q);
	if (ret == -ENOENT)
		return -1; /* rdma-core: umad_get_ca() of a wrong name fails */
	if (ret)
		return -ENODEV;
	if (!portguids) {
		free(q);
		return 0;
	}
	n = (int)q->nports + 1;
	if (n > max) {
		free(q);
		return -ENOMEM;
	}
	/* Index = port number; an HCA has no port 0. */
	portguids[0] = 0;
	for (i = 0; i < q->nports; i++)
		portguids[i + 1] = htobe64(q->ports[i].port_guid);
	free(q);
	return n;
}

UMAD_EXPORT int umad_get_issm_path(const char *ca_name, int portnum,
				   char path[], int max)
{
	struct ibemu_sess_ca *q;
	char dir[256];
	int ret, exists, n, err;

	ret = resolve(ca_name, &portnum, &q);
	if (ret == -ENOENT)
		return portnum ? -EINVAL : -ENODEV;
	if (ret)
		return ret;
	exists = ca_port(q, portnum) != NULL;
	/* rdma-core finds no umad device for a port that does not exist. */
	if (!exists || ibemu__umad_runtime_dir(dir, sizeof(dir))) {
		free(q);
		return -EINVAL;
	}
	/* The port's issm device: the daemon sets IsSM on the port while a
	 * process holds this file open (attach/sess_issm.c). */
	n = snprintf(path, (size_t)max, "%s/issm/%s.%d", dir, q->host, portnum);
	free(q);
	if (n < 0 || n >= max)
		return -EINVAL;
	/*
	 * The daemon makes no file for each port up front (10,000 of them
	 * took most of a large fabric's start): it is made here, the first
	 * time it is named, so that open() without O_CREAT works as on a
	 * device node. mknod() makes it without opening it: to the daemon's
	 * watch an open is an SM claiming the port.
	 */
	err = errno;
	if (mknod(path, S_IFREG | 0600, 0) && errno != EEXIST)
		UMAD_DEBUG("cannot make %s: %m", path);
	errno = err;
	return 0;
}
