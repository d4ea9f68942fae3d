/* The pump's lock (cubind/graph/ucx/pump.pyx) as a model, without UCX: one
 * thread turns in a loop (holds the lock TURN_US, lets it go, takes it
 * again), another takes it now and then, as a scheduler's send, a credit or
 * a dropped block does. Taken again at once, the lock starves the other
 * thread: unlocking wakes it, and it finds the lock taken again by the time
 * it runs. With `let-in` the turning thread, having let the lock go, yields
 * (up to LET_IN_US) while a thread is blocked on it, as Pump._let_in does.
 *
 *   cc -O2 -pthread -o lock_let_in bench/lock_let_in.c
 *   ./lock_let_in [at-once|let-in] [TAKES]
 *
 * Prints one JSON line: the mean and worst wait to take the lock. Needs two
 * free cores (each thread on its own, as on the GPU host): on the 2-core
 * development machine, 2000 takes waited 109 to 166 us on average (worst
 * 1.4 to 4.4 ms) where the lock was taken again at once, and 1.6 to 2.8 us
 * (worst 83 to 184 us) let in; three runs each. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define TURN_US 2
#define LET_IN_US 50

static pthread_mutex_t mu;
static int stop, waiters, let_in;

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void *turning(void *unused) {
    (void)unused;
    while (!__atomic_load_n(&stop, __ATOMIC_SEQ_CST)) {
        pthread_mutex_lock(&mu);
        for (uint64_t t = now_ns(); now_ns() - t < TURN_US * 1000u;) {
        }
        pthread_mutex_unlock(&mu);
        if (let_in)
            for (uint64_t t = now_ns();
                 __atomic_load_n(&waiters, __ATOMIC_SEQ_CST) && now_ns() - t < LET_IN_US * 1000u;)
                sched_yield(); /* as Pump._let_in: the blocked thread may need this core */
    }
    return NULL;
}

int main(int argc, char **argv) {
    let_in = argc > 1 && !strcmp(argv[1], "let-in");
    int takes = argc > 2 ? atoi(argv[2]) : 2000;
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ADAPTIVE_NP); /* the pump's kind */
    pthread_mutex_init(&mu, &attr);
    pthread_t thread;
    pthread_create(&thread, NULL, turning, NULL);
    usleep(10000);
    uint64_t worst = 0, sum = 0;
    for (int i = 0; i < takes; ++i) {
        usleep(100);
        uint64_t t = now_ns();
        if (pthread_mutex_trylock(&mu)) {
            __atomic_add_fetch(&waiters, 1, __ATOMIC_SEQ_CST);
            pthread_mutex_lock(&mu);
            __atomic_sub_fetch(&waiters, 1, __ATOMIC_SEQ_CST);
        }
        uint64_t waited = now_ns() - t;
        pthread_mutex_unlock(&mu);
        sum += waited;
        worst = waited > worst ? waited : worst;
    }
    __atomic_store_n(&stop, 1, __ATOMIC_SEQ_CST);
    pthread_join(thread, NULL);
    printf("{\"let_in\": %s, \"takes\": %d, \"mean_wait_us\": %.2f, \"worst_wait_us\": %.1f}\n",
           let_in ? "true" : "false", takes, sum / 1e3 / takes, worst / 1e3);
    return 0;
}
