#include "cli/proc.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>


#include "daolease/fact.h"

pid_t dls_cli_spawn(char *const argv[], char *const env[])
{
    pid_t pid = fork();
    if (pid != 0) {
        if (pid > 0)
            setpgid(pid, pid); /* also in the child: whichever runs first */
        return pid;
    }
    setpgid(0, 0);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGHUP, SIG_DFL);
    for (size_t i = 0; env && env[i]; i++)
        putenv(env[i]);
    execvp(argv[0], argv);
    _exit(127);
}

int dls_cli_exit_status(int wstatus)
{
    if (WIFEXITED(wstatus))
        return WEXITSTATUS(wstatus);
    if (WIFSIGNALED(wstatus))
        return 128 + WTERMSIG(wstatus);
    return 1;
}

void dls_cli_sleep(uint64_t ns)
{
    struct timespec ts = {(time_t)(ns / DLS_NS_PER_S), (long)(ns % DLS_NS_PER_S)};
    nanosleep(&ts, NULL);
}

static volatile sig_atomic_t stop_signal;

static void on_stop(int sig)
{
    stop_signal = sig;
}

void dls_cli_catch_stop(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
}

int dls_cli_stop_requested(void)
{
    return stop_signal;
}
