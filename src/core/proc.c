#include "proc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

bool ce_run_line(const char *prog, char *const argv[], char *out, size_t outsz, char *where, size_t wsz)
{
    char full[4096] = "";
    if (strchr(prog, '/')) {
        snprintf(full, sizeof full, "%s", prog);
    } else {
        const char *path = getenv("PATH");
        char *copy = strdup(path ? path : "/usr/bin:/bin"), *save = NULL;
        for (char *t = strtok_r(copy, ":", &save); t; t = strtok_r(NULL, ":", &save)) {
            char c[4096];
            snprintf(c, sizeof c, "%s/%s", t, prog);
            if (access(c, X_OK) == 0) { snprintf(full, sizeof full, "%s", c); break; }
        }
        free(copy);
    }
    if (where) snprintf(where, wsz, "%s", full);
    if (!full[0] || access(full, X_OK) != 0) return false;
    int fd[2];
    if (pipe(fd) != 0) return false;
    pid_t pid = fork();
    if (pid < 0) { close(fd[0]); close(fd[1]); return false; }
    if (pid == 0) {
        dup2(fd[1], 1);
        dup2(fd[1], 2);
        close(fd[0]);
        close(fd[1]);
        execv(full, argv);
        _exit(127);
    }
    close(fd[1]);
    size_t got = 0;
    ssize_t r;
    char buf[1024];
    while ((r = read(fd[0], buf, sizeof buf)) > 0)
        for (ssize_t i = 0; i < r; i++)
            if (got + 1 < outsz) out[got++] = buf[i];
    out[got] = '\0';
    close(fd[0]);
    int st;
    waitpid(pid, &st, 0);
    out[strcspn(out, "\r\n")] = '\0';
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 && got > 0;
}
