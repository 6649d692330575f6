/* daolease tests — process and timing helpers (support.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdbool.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "support.h"

void sleep_ms(unsigned ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

uint64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int status_of(int ws)
{
    return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
}

int run_sh(const char *fmt, ...)
{
    char cmd[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    return status_of(system(cmd));
}

static pid_t vspawn(bool group, const char *fmt, va_list ap)
{
    char cmd[8192];
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (group)
            setpgid(0, 0);
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    if (group)
        setpgid(pid, pid);
    return pid;
}

pid_t spawn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pid_t pid = vspawn(false, fmt, ap);
    va_end(ap);
    return pid;
}

pid_t spawn_group(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pid_t pid = vspawn(true, fmt, ap);
    va_end(ap);
    return pid;
}

int wait_status(pid_t pid)
{
    int ws;
    assert_int_equal(waitpid(pid, &ws, 0), pid);
    return status_of(ws);
}

int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t l = sizeof a;
    int port = -1;
    if (bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
        getsockname(fd, (struct sockaddr *)&a, &l) == 0)
        port = ntohs(a.sin_port);
    close(fd);
    return port;
}

size_t test_unhex(const char *hex, uint8_t *out, size_t cap)
{
    size_t len = strlen(hex), got = 0;
    assert_true(len % 2 == 0 && len / 2 <= cap);
    assert_int_equal(sodium_hex2bin(out, cap, hex, len, NULL, &got, NULL), 0);
    assert_int_equal(got, len / 2);
    return got;
}
