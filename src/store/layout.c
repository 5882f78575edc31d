#include "layout.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/file.h"

const char *ce_layout_target(const char *platform)
{
    if (platform && strcmp(platform, "linux-x86_64") == 0) return "x86_64-linux";
    if (platform && strcmp(platform, "linux-sbsa") == 0) return "sbsa-linux";
    return NULL;
}

int ce_layout_begin(const char *dst, const char *target)
{
    char p[PATH_MAX + 64], link[CE_PATH_MAX], to[128];
    static const char *const dirs[][2] = { { "include", "include" }, { "lib", "lib64" } };
    for (size_t i = 0; i < 2; i++) {
        snprintf(p, sizeof p, "%s/targets/%s/%s", dst, target, dirs[i][0]);
        int rc = ce_mkdir_p(p, 0755);
        if (rc) return rc;
        if ((rc = ce_join(link, sizeof link, dst, dirs[i][1]))) return rc;
        snprintf(to, sizeof to, "targets/%s/%s", target, dirs[i][0]);
        if (symlink(to, link) != 0)
            return ce_fail(CE_ERR_IO, "cannot create the link %s -> %s: %m", link, to);
    }
    return CE_OK;
}

/* A top-level file of a component (LICENSE): share/licenses/<name>/<file>. */
static int place_file(const char *src, const char *dst, const char *name, const char *file,
                      ce_filelist *files)
{
    char dir[PATH_MAX + 300], one[CE_PATH_MAX], rel[600];
    snprintf(dir, sizeof dir, "%s/share/licenses/%s", dst, name);
    int rc = ce_mkdir_p(dir, 0755);
    if (rc) return rc;
    snprintf(rel, sizeof rel, "share/licenses/%s/%s", name, file);
    if ((rc = ce_join(one, sizeof one, dir, file))) return rc;
    if (link(src, one) == 0) {
        files->linked++;
    } else {
        char *data;
        size_t len;
        if ((rc = ce_file_read(src, 1u << 26, &data, &len))) return rc;
        rc = ce_file_write_atomic(one, data, len, 0644);
        free(data);
        if (rc) return rc;
        files->copied++;
    }
    struct stat st;
    if (stat(one, &st) != 0) return ce_fail(CE_ERR_IO, "cannot stat %s: %m", one);
    return ce_filelist_add(files, rel, (long long)st.st_size);
}

int ce_layout_component(ce_ctx *ctx, const char *tree, const char *dst, const char *target, const char *name,
                        ce_filelist *files)
{
    DIR *d = opendir(tree);
    if (!d) return ce_fail(CE_ERR_IO, "cannot read %s: %m", tree);
    int rc = CE_OK;
    struct dirent *e;
    while (rc == CE_OK && (e = readdir(d))) {
        const char *nm = e->d_name;
        if (!strcmp(nm, ".") || !strcmp(nm, "..")) continue;
        char sp[CE_PATH_MAX], sub[300];
        if ((rc = ce_join(sp, sizeof sp, tree, nm))) break;
        struct stat st;
        if (lstat(sp, &st) != 0) { rc = ce_fail(CE_ERR_IO, "cannot stat %s: %m", sp); break; }
        if (!S_ISDIR(st.st_mode)) {
            if (S_ISREG(st.st_mode)) rc = place_file(sp, dst, name, nm, files);
            continue; /* a top-level link: nothing a toolkit needs */
        }
        if (!strcmp(nm, "include")) snprintf(sub, sizeof sub, "targets/%s/include", target);
        else if (!strcmp(nm, "lib") || !strcmp(nm, "lib64")) snprintf(sub, sizeof sub, "targets/%s/lib", target);
        else snprintf(sub, sizeof sub, "%s", nm);
        rc = ce_compose_merge(ctx, sp, dst, sub, files);
    }
    closedir(d);
    return rc;
}

int ce_layout_version_json(const char *dst, const char *cuda, const ce_layout_version *v, size_t n,
                           ce_filelist *files)
{
    size_t cap = 256 + n * 512, used = 0;
    char *buf = malloc(cap);
    if (!buf) return ce_fail(CE_ERR_NOMEM, "out of memory");
    used += (size_t)snprintf(buf + used, cap - used, "{\n   \"cuda\" : {\n      \"name\" : \"CUDA SDK\",\n"
                             "      \"version\" : \"%s\"\n   }", cuda);
    for (size_t i = 0; i < n && used < cap; i++) {
        /* values come from a validated JSON: names [a-z0-9_], versions digits and dots;
         * the display name is escaped conservatively */
        char nm[256];
        size_t k = 0;
        for (const char *s = v[i].name ? v[i].name : v[i].key; *s && k + 1 < sizeof nm; s++)
            if (*s != '"' && *s != '\\' && (unsigned char)*s >= ' ') nm[k++] = *s;
        nm[k] = '\0';
        used += (size_t)snprintf(buf + used, cap - used, ",\n   \"%s\" : {\n      \"name\" : \"%s\",\n"
                                 "      \"version\" : \"%s\"\n   }", v[i].key, nm, v[i].version);
    }
    if (used < cap) used += (size_t)snprintf(buf + used, cap - used, "\n}\n");
    if (used >= cap) { free(buf); return ce_fail(CE_ERR_OTHER, "version.json too long"); }
    char path[PATH_MAX + 20];
    snprintf(path, sizeof path, "%s/version.json", dst);
    int rc = ce_file_write_atomic(path, buf, used, 0644);
    free(buf);
    if (rc == CE_OK) rc = ce_filelist_add(files, "version.json", (long long)used);
    return rc;
}
