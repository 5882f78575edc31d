/* Containers and WSL2 as the machine shows them (markers, the kernel's
 * release string): read here, judged by doctor_platform.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "probe.h"

/* Probe texts are display strings built from paths and names of up to
 * PATH_MAX: cutting an absurdly long one short is the right outcome. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wformat-truncation"
#endif

void ce_probe_platform(const ce_machine *m, ce_probe *p)
{
    char buf[8192];
    const char *k8s = getenv("KUBERNETES_SERVICE_HOST");
    if (ce_machine_exists(m, "/.dockerenv")) {
        snprintf(p->container, sizeof p->container, "docker");
        snprintf(p->container_why, sizeof p->container_why, "%s/.dockerenv exists", m->root);
    } else if (ce_machine_exists(m, "/run/.containerenv")) {
        snprintf(p->container, sizeof p->container, "podman");
        snprintf(p->container_why, sizeof p->container_why, "%s/run/.containerenv exists", m->root);
    } else if (k8s && *k8s) {
        snprintf(p->container, sizeof p->container, "kubernetes");
        snprintf(p->container_why, sizeof p->container_why, "KUBERNETES_SERVICE_HOST=%s", k8s);
    } else if (ce_machine_read(m, "/proc/1/cgroup", buf, sizeof buf) > 0) {
        static const char *const marks[][2] = { { "kubepods", "kubernetes" }, { "docker", "docker" },
                                                { "libpod", "podman" }, { "containerd", "containerd" },
                                                { "lxc", "lxc" } };
        for (size_t i = 0; i < sizeof marks / sizeof *marks; i++) {
            if (strstr(buf, marks[i][0])) {
                snprintf(p->container, sizeof p->container, "%s", marks[i][1]);
                snprintf(p->container_why, sizeof p->container_why, "%s/proc/1/cgroup mentions %s", m->root,
                         marks[i][0]);
                break;
            }
        }
    }
    if (ce_machine_read(m, "/proc/sys/kernel/osrelease", p->osrelease, sizeof p->osrelease) > 0) {
        p->osrelease[strcspn(p->osrelease, "\n")] = '\0';
        p->wsl = strcasestr(p->osrelease, "microsoft") || strstr(p->osrelease, "WSL");
    }
}
