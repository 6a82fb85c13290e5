// SPDX-License-Identifier: MIT
/*
 * The HCA's IPoIB interfaces (devnode/README.md). On a host with an IB
 * adapter each port has an IPoIB interface (ib0, ib1...) holding the port's
 * IP address, and programs find their RDMA addresses through getifaddrs():
 * libfabric's verbs provider binds each interface address with rdma_cm to
 * learn which device owns it, and offers MSG endpoints (and ofi_rxm over
 * them) only for those. ibemu configures no interface on the host, so
 * getifaddrs() lists one per port of the process's HCA before the host's
 * own, from $IBEMU_IFADDRS ("ib0=127.10.0.1,ib1=127.10.0.2", which
 * 'ibemu exec' sets from the daemon's addresses); freeifaddrs() knows the
 * lists it made. Addresses are in 127.0.0.0/8, so nothing routes off the
 * machine.
 */
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "sess_proto.h"

#define DEVNODE_EXPORT __attribute__((visibility("default")))
#define IFADDRS_MAX    9 /* ports of an HCA (IBEMU_SESS_MAX_PORTS) */

/* One getifaddrs() answer of ours: our entries, then libc's list. */
struct ifaddrs_block {
	struct ifaddrs_block *next; /* the lists handed out, not freed */
	struct ifaddrs *libc;	    /* libc's list after ours */
	struct ifaddrs ifa[IFADDRS_MAX];
	struct sockaddr_in addr[IFADDRS_MAX], mask[IFADDRS_MAX],
		bcast[IFADDRS_MAX];
	char name[IFADDRS_MAX][IF_NAMESIZE];
};

static pthread_mutex_t blocks_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ifaddrs_block *blocks;

typedef int getifaddrs_fn(struct ifaddrs **ifap);
typedef void freeifaddrs_fn(struct ifaddrs *ifa);

static void sin_set(struct sockaddr_in *sin, uint32_t addr_be)
{
	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = addr_be;
}

/* Parses "name=a.b.c.d" pairs into 'b'; the number of interfaces. */
static int parse(const char *spec, struct ifaddrs_block *b)
{
	char buf[512], *save = NULL, *tok;
	int n = 0;

	if (strlen(spec) >= sizeof(buf))
		return 0;
	strcpy(buf, spec);
	for (tok = strtok_r(buf, ",", &save); tok && n < IFADDRS_MAX;
	     tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		struct in_addr a;

		if (!eq || eq == tok || (size_t)(eq - tok) >= IF_NAMESIZE ||
		    inet_pton(AF_INET, eq + 1, &a) != 1)
			continue;
		memcpy(b->name[n], tok, (size_t)(eq - tok));
		b->name[n][eq - tok] = '\0';
		sin_set(&b->addr[n], a.s_addr);
		sin_set(&b->mask[n], htonl(0xff000000u));
		sin_set(&b->bcast[n], a.s_addr | htonl(0x00ffffffu));
		n++;
	}
	return n;
}

static void link_entries(struct ifaddrs_block *b, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		struct ifaddrs *ifa = &b->ifa[i];

		ifa->ifa_next = i + 1 < n ? &b->ifa[i + 1] : b->libc;
		ifa->ifa_name = b->name[i];
		ifa->ifa_flags =
			IFF_UP | IFF_RUNNING | IFF_BROADCAST | IFF_MULTICAST;
		ifa->ifa_addr = (struct sockaddr *)&b->addr[i];
		ifa->ifa_netmask = (struct sockaddr *)&b->mask[i];
		ifa->ifa_broadaddr = (struct sockaddr *)&b->bcast[i];
		ifa->ifa_data = NULL;
	}
}

DEVNODE_EXPORT int getifaddrs(struct ifaddrs **ifap)
{
	static getifaddrs_fn *real;
	const char *spec = getenv(IBEMU_SESS_ENV_IFADDRS);
	struct ifaddrs_block *b;
	int n;

	if (!real)
		*(void **)&real = dlsym(RTLD_NEXT, "getifaddrs");
	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	if (real(ifap))
		return -1;
	if (!spec || !*spec)
		return 0;
	b = calloc(1, sizeof(*b));
	if (!b)
		return 0; /* the host's interfaces, as without ibemu */
	n = parse(spec, b);
	if (!n) {
		free(b);
		return 0;
	}
	b->libc = *ifap;
	link_entries(b, n);
	pthread_mutex_lock(&blocks_lock);
	b->next = blocks;
	blocks = b;
	pthread_mutex_unlock(&blocks_lock);
	*ifap = &b->ifa[0];
	return 0;
}

DEVNODE_EXPORT void freeifaddrs(struct ifaddrs *ifa)
{
	static freeifaddrs_fn *real;
	struct ifaddrs_block **pp, *b = NULL;

	if (!real)
		*(void **)&real = dlsym(RTLD_NEXT, "freeifaddrs");
	pthread_mutex_lock(&blocks_lock);
	for (pp = &blocks; *pp; pp = &(*pp)->next)
		if (&(*pp)->ifa[0] == ifa) {
			b = *pp;
			*pp = b->next;
			break;
		}
	pthread_mutex_unlock(&blocks_lock);
	if (b) {
		ifa = b->libc;
		free(b);
	}
	if (ifa && real)
		real(ifa);
}
