/* seedload: the load and the probes of the seeds' experiments, run inside the guest.
 *
 *   seedload send ADDR PORT PERIOD_NS COUNT SIZE [TIMES]
 *       COUNT UDP datagrams of SIZE bytes to ADDR:PORT, one every PERIOD_NS on
 *       absolute CLOCK_MONOTONIC release times (0: back to back); TIMES gets the
 *       CLOCK_MONOTONIC ns at which each sendto() returned, one per line.
 *   seedload recv PORT COUNT IDLE_NS [TIMES [READS]]
 *       receive until COUNT datagrams or IDLE_NS without one; TIMES ("-": none) gets
 *       each datagram's kernel receive timestamp (SO_TIMESTAMPNS, ns), READS the
 *       CLOCK_MONOTONIC ns at which the read of it returned, one per line. Prints
 *       "received N".
 *   seedload vsend ADDR PORT SIZE DURATION_NS SEED PHASE_MIN_NS PHASE_MAX_NS PHASES PERIOD_NS...
 *       a fluctuating load for DURATION_NS: phases of a length drawn uniformly from
 *       PHASE_MIN_NS..PHASE_MAX_NS, each sending at one of the PERIOD_NS drawn
 *       uniformly (absolute releases); the draws come from SEED alone, so every run
 *       with the same arguments sends the same load. PHASES ("-": none) gets
 *       "start_ns period_ns sent" per phase. Prints "sent N failed M phases P".
 *   seedload msend ADDR PORT SIZE DURATION_NS SEED RATE_LO RATE_HI HOLD_LO_NS HOLD_HI_NS [STATES]
 *       an MMPP-2 load (a two-state Markov-modulated Poisson process) for DURATION_NS:
 *       the sender stays in its low state (RATE_LO datagrams/s) for an exponential time
 *       of mean HOLD_LO_NS, then in its high state (RATE_HI/s) for one of mean
 *       HOLD_HI_NS, and so on, starting low; within a state the gaps between datagrams
 *       are exponential of mean 1/rate (a rate of 0 sends nothing), on absolute
 *       CLOCK_MONOTONIC releases. Every draw is integer ns and comes from SEED alone.
 *       STATES gets "start_ns state sent" per sojourn (state 0 low, 1 high). Prints
 *       "sent N failed M sojourns K high_ns H start_ns S duration_ns D seed X rate_lo L
 *       rate_hi R hold_lo_ns A hold_hi_ns B" (H: the time spent in the high state).
 *   seedload player PERIOD_NS WORK_NS FRAMES [TIMES [DELAY_NS]]
 *       a periodic player: every PERIOD_NS (absolute releases) WORK_NS of CPU time
 *       (CLOCK_THREAD_CPUTIME_ID), a frame missing its deadline when it ends after the
 *       next release. TIMES gets "release start end" per frame in CLOCK_MONOTONIC ns.
 *       Prints "frames N misses M off_mean_ns A off_max_ns B": the mean and the longest
 *       of the frames' time off their work (start to end less the CPU time the frame
 *       got: preempted, or in interrupts). Its comm is "seedplayer", for a profile's
 *       task selector; the first release is DELAY_NS (default one period) after the start,
 *       time for a reservation to be given to it.
 *   seedload disk DEV DEPTH SIZE SECONDS
 *       direct reads of SIZE bytes from the block device DEV (O_DIRECT, Linux AIO),
 *       DEPTH of them in flight at all times, for SECONDS of CLOCK_MONOTONIC: each
 *       completion is reaped and a read at the next offset submitted at once, so the
 *       device's queue never runs dry. Prints "ios N bytes B ns T": the reads completed
 *       in the T ns from the first submission to the end.
 *
 * The scheduling policy is set from outside (chrt, irqres), so the same binary serves
 * SCHED_FIFO at any priority and SCHED_DEADLINE. Exit status 0 on success, 2 on bad
 * arguments, 1 when a system call fails (the message names it).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <math.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define NS_PER_S 1000000000LL

static int64_t now_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (int64_t)ts.tv_sec * NS_PER_S + ts.tv_nsec;
}

static void sleep_until(int64_t t)
{
	struct timespec ts = { .tv_sec = t / NS_PER_S, .tv_nsec = t % NS_PER_S };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static int parse_i64(const char *s, const char *what, int64_t *out)
{
	char *end;

	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno || *end || v < 0) {
		fprintf(stderr, "seedload: %s: %s is not a non-negative integer\n", what, s);
		return -1;
	}
	*out = v;
	return 0;
}

static int64_t *alloc_times(int64_t n)
{
	int64_t *t = calloc((size_t)(n > 0 ? n : 1), sizeof(*t));

	if (!t)
		fprintf(stderr, "seedload: no memory for %lld timestamps\n", (long long)n);
	return t;
}

static int write_times(const char *path, const int64_t *t, int64_t n, int cols)
{
	FILE *f;

	if (!path)
		return 0;
	f = fopen(path, "w");
	if (!f) {
		fprintf(stderr, "seedload: %s: %s\n", path, strerror(errno));
		return -1;
	}
	for (int64_t i = 0; i < n; i++) {
		for (int c = 0; c < cols; c++)
			fprintf(f, c ? " %lld" : "%lld", (long long)t[i * cols + c]);
		fputc('\n', f);
	}
	return fclose(f) ? -1 : 0;
}

/* a UDP socket for sending to TO, whose port it sets to PORT; -1 (said) on failure */
static int udp_socket_to(struct sockaddr_in *to, int64_t port)
{
	int s;

	to->sin_port = htons((uint16_t)port);
	s = socket(AF_INET, SOCK_DGRAM, 0);
	if (s < 0)
		perror("seedload: socket");
	return s;
}

static int do_send(int argc, char **argv)
{
	int64_t port, period, count, size;
	struct sockaddr_in to = { .sin_family = AF_INET };
	char buf[65536] = { 0 };

	if (argc < 5 || parse_i64(argv[1], "port", &port) ||
	    parse_i64(argv[2], "period", &period) || parse_i64(argv[3], "count", &count) ||
	    parse_i64(argv[4], "size", &size) || size > (int64_t)sizeof(buf) ||
	    inet_pton(AF_INET, argv[0], &to.sin_addr) != 1) {
		fprintf(stderr, "usage: seedload send ADDR PORT PERIOD_NS COUNT SIZE [TIMES]\n");
		return 2;
	}
	int s = udp_socket_to(&to, port);
	if (s < 0)
		return 1;
	int64_t *t = alloc_times(count);
	if (!t)
		return 1;
	int64_t start = now_ns(CLOCK_MONOTONIC) + 1000000, sent = 0, failed = 0;
	for (int64_t k = 0; k < count; k++) {
		if (period)
			sleep_until(start + k * period);
		if (sendto(s, buf, (size_t)size, 0, (struct sockaddr *)&to, sizeof(to)) < 0)
			failed++;
		else
			t[sent++] = now_ns(CLOCK_MONOTONIC);
	}
	printf("sent %lld failed %lld\n", (long long)sent, (long long)failed);
	int rc = write_times(argc > 5 ? argv[5] : NULL, t, sent, 1);
	free(t);
	close(s);
	return rc ? 1 : 0;
}

/* xorshift64*: a small generator whose sequence depends on the seed alone */
static uint64_t next_rand(uint64_t *x)
{
	*x ^= *x >> 12;
	*x ^= *x << 25;
	*x ^= *x >> 27;
	return *x * 0x2545F4914F6CDD1DULL;
}

static int do_vsend(int argc, char **argv)
{
	int64_t port, size, duration, seed, pmin, pmax, periods[32];
	int np = argc - 8;
	struct sockaddr_in to = { .sin_family = AF_INET };
	char buf[65536] = { 0 };

	if (argc < 9 || np > 32 || parse_i64(argv[1], "port", &port) ||
	    parse_i64(argv[2], "size", &size) || size > (int64_t)sizeof(buf) ||
	    parse_i64(argv[3], "duration", &duration) || parse_i64(argv[4], "seed", &seed) ||
	    parse_i64(argv[5], "phase min", &pmin) || parse_i64(argv[6], "phase max", &pmax) ||
	    !pmin || pmax < pmin || inet_pton(AF_INET, argv[0], &to.sin_addr) != 1)
		goto usage;
	for (int i = 0; i < np; i++)
		if (parse_i64(argv[8 + i], "period", &periods[i]) || !periods[i])
			goto usage;
	int s = udp_socket_to(&to, port);
	if (s < 0)
		return 1;
	int64_t nphases = duration / pmin + 1;
	int64_t *ph = alloc_times(3 * nphases);
	if (!ph) {
		close(s);
		return 1;
	}
	uint64_t x = (uint64_t)seed * 0x9E3779B97F4A7C15ULL + 1;
	int64_t start = now_ns(CLOCK_MONOTONIC) + 1000000, end = start + duration;
	int64_t t = start, sent = 0, failed = 0, k = 0;
	while (t < end && k < nphases) {
		int64_t len = pmin + (int64_t)(next_rand(&x) % (uint64_t)(pmax - pmin + 1));
		int64_t period = periods[next_rand(&x) % (uint64_t)np];
		int64_t stop = t + len < end ? t + len : end, n = 0;
		for (int64_t r = t; r < stop; r += period) {
			sleep_until(r);
			if (sendto(s, buf, (size_t)size, 0, (struct sockaddr *)&to, sizeof(to)) < 0)
				failed++;
			else
				n++;
		}
		ph[3 * k] = t;
		ph[3 * k + 1] = period;
		ph[3 * k + 2] = n;
		sent += n;
		k++;
		t = stop;
	}
	printf("sent %lld failed %lld phases %lld\n", (long long)sent, (long long)failed,
	       (long long)k);
	int rc = strcmp(argv[7], "-") ? write_times(argv[7], ph, k, 3) : 0;
	free(ph);
	close(s);
	return rc ? 1 : 0;
usage:
	fprintf(stderr, "usage: seedload vsend ADDR PORT SIZE DURATION_NS SEED PHASE_MIN_NS "
		"PHASE_MAX_NS PHASES PERIOD_NS... (at most 32 periods)\n");
	return 2;
}

/* an exponential draw of mean MEAN_NS, in integer ns (inverse transform of a uniform
 * in (0, 1] made of the generator's top 53 bits) */
static int64_t exp_ns(uint64_t *x, int64_t mean_ns)
{
	double u = (double)((next_rand(x) >> 11) + 1) / 9007199254740992.0;

	return (int64_t)llround(-log(u) * (double)mean_ns);
}

struct mmpp {
	int64_t rate[2], hold[2];	/* datagrams/s and mean sojourn ns, low and high */
};

/* one sojourn in STATE from T to at most END: its datagrams, at exponential gaps */
static int64_t mmpp_sojourn(const struct mmpp *m, int state, int64_t t, int64_t end,
			    uint64_t *x, int s, const char *buf, int64_t size,
			    const struct sockaddr_in *to, int64_t *failed)
{
	int64_t n = 0;

	if (!m->rate[state])
		return 0;
	for (int64_t r = t + exp_ns(x, NS_PER_S / m->rate[state]); r < end;
	     r += exp_ns(x, NS_PER_S / m->rate[state])) {
		sleep_until(r);
		if (sendto(s, buf, (size_t)size, 0, (const struct sockaddr *)to, sizeof(*to)) < 0)
			(*failed)++;
		else
			n++;
	}
	return n;
}

static int do_msend(int argc, char **argv)
{
	int64_t port, size, duration, seed;
	struct mmpp m;
	struct sockaddr_in to = { .sin_family = AF_INET };
	static char buf[65536];
	int rc = 1;

	if (argc < 9 || parse_i64(argv[1], "port", &port) ||
	    parse_i64(argv[2], "size", &size) || size > (int64_t)sizeof(buf) ||
	    parse_i64(argv[3], "duration", &duration) || parse_i64(argv[4], "seed", &seed) ||
	    parse_i64(argv[5], "low rate", &m.rate[0]) ||
	    parse_i64(argv[6], "high rate", &m.rate[1]) ||
	    parse_i64(argv[7], "low hold", &m.hold[0]) ||
	    parse_i64(argv[8], "high hold", &m.hold[1]) || !m.hold[0] || !m.hold[1] ||
	    m.rate[0] > NS_PER_S || m.rate[1] > NS_PER_S ||
	    inet_pton(AF_INET, argv[0], &to.sin_addr) != 1) {
		fprintf(stderr, "usage: seedload msend ADDR PORT SIZE DURATION_NS SEED RATE_LO "
			"RATE_HI HOLD_LO_NS HOLD_HI_NS [STATES] (rates 0..1e9/s, holds > 0)\n");
		return 2;
	}
	int s = udp_socket_to(&to, port);
	if (s < 0)
		return 1;
	/* a sojourn lasts at least 1 ns: at most DURATION_NS of them, grown as needed */
	int64_t cap = 1024, k = 0, *so = alloc_times(3 * cap);
	if (!so)
		goto out_sock;
	uint64_t x = (uint64_t)seed * 0x9E3779B97F4A7C15ULL + 1;
	int64_t start = now_ns(CLOCK_MONOTONIC) + 1000000, end = start + duration;
	int64_t t = start, sent = 0, failed = 0, high = 0;
	for (int state = 0; t < end; state ^= 1) {
		int64_t len = exp_ns(&x, m.hold[state]), stop = len < end - t ? t + len : end;
		if (k == cap) {
			int64_t *more = realloc(so, (size_t)(6 * cap) * sizeof(*so));
			if (!more) {
				fprintf(stderr, "seedload: no memory for %lld sojourns\n",
					(long long)(2 * cap));
				goto out_so;
			}
			so = more;
			cap *= 2;
		}
		int64_t n = mmpp_sojourn(&m, state, t, stop, &x, s, buf, size, &to, &failed);
		so[3 * k] = t;
		so[3 * k + 1] = state;
		so[3 * k + 2] = n;
		k++;
		sent += n;
		high += state ? stop - t : 0;
		t = stop;
	}
	printf("sent %lld failed %lld sojourns %lld high_ns %lld start_ns %lld duration_ns %lld "
	       "seed %lld rate_lo %lld rate_hi %lld hold_lo_ns %lld hold_hi_ns %lld\n",
	       (long long)sent, (long long)failed, (long long)k, (long long)high,
	       (long long)start, (long long)duration, (long long)seed, (long long)m.rate[0],
	       (long long)m.rate[1], (long long)m.hold[0], (long long)m.hold[1]);
	rc = write_times(argc > 9 ? argv[9] : NULL, so, k, 3) ? 1 : 0;
out_so:
	free(so);
out_sock:
	close(s);
	return rc;
}

static int do_recv(int argc, char **argv)
{
	int64_t port, count, idle;
	struct sockaddr_in me = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY) };
	int one = 1, rcvbuf = 4 << 20;

	if (argc < 3 || parse_i64(argv[0], "port", &port) ||
	    parse_i64(argv[1], "count", &count) || parse_i64(argv[2], "idle", &idle)) {
		fprintf(stderr, "usage: seedload recv PORT COUNT IDLE_NS [TIMES [READS]]\n");
		return 2;
	}
	me.sin_port = htons((uint16_t)port);
	int s = socket(AF_INET, SOCK_DGRAM, 0);
	if (s < 0 || setsockopt(s, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one)) ||
	    setsockopt(s, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf)) ||
	    bind(s, (struct sockaddr *)&me, sizeof(me))) {
		perror("seedload: receiving socket");
		return 1;
	}
	struct timeval tv = { .tv_sec = idle / NS_PER_S, .tv_usec = (idle % NS_PER_S) / 1000 };
	setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	int64_t *t = alloc_times(count), *rd = alloc_times(argc > 4 ? count : 0);
	if (!t || !rd) {
		free(t);
		free(rd);
		return 1;
	}
	int64_t got = 0;
	/* a long first wait: the sender may start a while after the receiver */
	int first = 1;
	while (got < count) {
		char data[65536], ctl[256];
		struct iovec iov = { data, sizeof(data) };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl,
				     .msg_controllen = sizeof(ctl) };
		if (recvmsg(s, &mh, 0) < 0) {
			if ((errno == EAGAIN || errno == EWOULDBLOCK) && first)
				continue;
			break;
		}
		first = 0;
		if (argc > 4)
			rd[got] = now_ns(CLOCK_MONOTONIC);
		int64_t ts = now_ns(CLOCK_REALTIME);
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
			if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS) {
				struct timespec k;
				memcpy(&k, CMSG_DATA(c), sizeof(k));
				ts = (int64_t)k.tv_sec * NS_PER_S + k.tv_nsec;
			}
		}
		t[got++] = ts;
	}
	printf("received %lld\n", (long long)got);
	int rc = write_times(argc > 3 && strcmp(argv[3], "-") ? argv[3] : NULL, t, got, 1);
	rc = write_times(argc > 4 ? argv[4] : NULL, rd, got, 1) || rc;
	free(rd);
	free(t);
	close(s);
	return rc ? 1 : 0;
}

static int do_player(int argc, char **argv)
{
	int64_t period, work, frames, delay = 0, misses = 0, off_sum = 0, off_max = 0;

	if (argc < 3 || parse_i64(argv[0], "period", &period) ||
	    parse_i64(argv[1], "work", &work) || parse_i64(argv[2], "frames", &frames) ||
	    !period || (argc > 4 && parse_i64(argv[4], "delay", &delay))) {
		fprintf(stderr, "usage: seedload player PERIOD_NS WORK_NS FRAMES [TIMES [DELAY_NS]]\n");
		return 2;
	}
	int64_t *t = alloc_times(3 * frames);
	if (!t)
		return 1;
	prctl(PR_SET_NAME, "seedplayer", 0, 0, 0);
	int64_t start = now_ns(CLOCK_MONOTONIC) + (delay ? delay : period);
	for (int64_t k = 0; k < frames; k++) {
		int64_t release = start + k * period;
		sleep_until(release);
		int64_t begin = now_ns(CLOCK_MONOTONIC);
		int64_t cpu0 = now_ns(CLOCK_THREAD_CPUTIME_ID), cpu1;
		while ((cpu1 = now_ns(CLOCK_THREAD_CPUTIME_ID)) - cpu0 < work)
			;
		int64_t end = now_ns(CLOCK_MONOTONIC);
		/* the frame's time off its work: preempted, or in interrupts */
		int64_t off = (end - begin) - (cpu1 - cpu0);
		if (off < 0)
			off = 0;
		off_sum += off;
		if (off > off_max)
			off_max = off;
		t[3 * k] = release;
		t[3 * k + 1] = begin;
		t[3 * k + 2] = end;
		if (end > release + period)
			misses++;
	}
	printf("frames %lld misses %lld off_mean_ns %lld off_max_ns %lld\n", (long long)frames,
	       (long long)misses, (long long)(frames ? off_sum / frames : 0), (long long)off_max);
	int rc = write_times(argc > 3 ? argv[3] : NULL, t, frames, 3);
	free(t);
	return rc ? 1 : 0;
}

static void prep_read(struct iocb *cb, int fd, void *buf, int64_t size, int64_t off,
		      uint64_t slot)
{
	memset(cb, 0, sizeof(*cb));
	cb->aio_data = slot;
	cb->aio_lio_opcode = IOCB_CMD_PREAD;
	cb->aio_fildes = (uint32_t)fd;
	cb->aio_buf = (uint64_t)(uintptr_t)buf;
	cb->aio_nbytes = (uint64_t)size;
	cb->aio_offset = off;
}

static int do_disk(int argc, char **argv)
{
	int64_t depth, size, seconds, span = 0, ios = 0, bytes = 0, next = 0;
	aio_context_t ctx = 0;
	int rc = 1;

	if (argc < 4 || parse_i64(argv[1], "depth", &depth) || parse_i64(argv[2], "size", &size) ||
	    parse_i64(argv[3], "seconds", &seconds) || seconds < 1 || depth < 1 || depth > 1024 ||
	    size < 512 || size % 512 || size > (64 << 20)) {
		fprintf(stderr, "usage: seedload disk DEV DEPTH(1..1024) SIZE(512-byte multiple) "
			"SECONDS\n");
		return 2;
	}
	int fd = open(argv[0], O_RDONLY | O_DIRECT);
	if (fd < 0) {
		fprintf(stderr, "seedload: %s: %s\n", argv[0], strerror(errno));
		return 1;
	}
	off_t devsize = lseek(fd, 0, SEEK_END);
	if (devsize < size * depth) {
		fprintf(stderr, "seedload: %s: %lld bytes, fewer than DEPTH x SIZE\n", argv[0],
			(long long)devsize);
		goto out_fd;
	}
	int64_t slots = devsize / size;
	char *bufs = NULL;
	struct iocb *cbs = calloc((size_t)depth, sizeof(*cbs));
	struct iocb **ptrs = calloc((size_t)depth, sizeof(*ptrs));
	struct io_event *evs = calloc((size_t)depth, sizeof(*evs));
	if (!cbs || !ptrs || !evs || posix_memalign((void **)&bufs, 4096, (size_t)(depth * size))) {
		fprintf(stderr, "seedload: no memory for %lld buffers\n", (long long)depth);
		goto out_mem;
	}
	if (syscall(SYS_io_setup, (long)depth, &ctx)) {
		fprintf(stderr, "seedload: io_setup(%lld): %s\n", (long long)depth, strerror(errno));
		goto out_mem;
	}
	for (int64_t i = 0; i < depth; i++) {
		prep_read(&cbs[i], fd, bufs + i * size, size, (next++ % slots) * size, (uint64_t)i);
		ptrs[i] = &cbs[i];
	}
	int64_t start = now_ns(CLOCK_MONOTONIC), end = start + seconds * NS_PER_S, inflight = 0;
	if (syscall(SYS_io_submit, ctx, (long)depth, ptrs) != depth) {
		fprintf(stderr, "seedload: io_submit of %lld reads: %s\n", (long long)depth,
			strerror(errno));
		goto out_ctx;
	}
	inflight = depth;
	while (inflight) {
		long n = syscall(SYS_io_getevents, ctx, 1L, (long)depth, evs, NULL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "seedload: io_getevents: %s\n", strerror(errno));
			goto out_ctx;
		}
		int64_t now = now_ns(CLOCK_MONOTONIC), again = 0;
		inflight -= n;
		for (long i = 0; i < n; i++) {
			if (evs[i].res != size) {
				fprintf(stderr, "seedload: %s: read returned %lld\n", argv[0],
					(long long)evs[i].res);
				goto out_ctx;
			}
			if (now >= end)
				continue;
			ios++;
			bytes += size;
			uint64_t slot = evs[i].data;
			prep_read(&cbs[slot], fd, bufs + slot * size, size, (next++ % slots) * size,
				  slot);
			ptrs[again++] = &cbs[slot];
		}
		if (again && syscall(SYS_io_submit, ctx, (long)again, ptrs) != again) {
			fprintf(stderr, "seedload: io_submit: %s\n", strerror(errno));
			goto out_ctx;
		}
		inflight += again;
		span = (now < end ? now : end) - start;
	}
	printf("ios %lld bytes %lld ns %lld\n", (long long)ios, (long long)bytes, (long long)span);
	rc = 0;
out_ctx:
	syscall(SYS_io_destroy, ctx);
out_mem:
	free(bufs);
	free(evs);
	free(ptrs);
	free(cbs);
out_fd:
	close(fd);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "send"))
		return do_send(argc - 2, argv + 2);
	if (argc >= 2 && !strcmp(argv[1], "vsend"))
		return do_vsend(argc - 2, argv + 2);
	if (argc >= 2 && !strcmp(argv[1], "msend"))
		return do_msend(argc - 2, argv + 2);
	if (argc >= 2 && !strcmp(argv[1], "recv"))
		return do_recv(argc - 2, argv + 2);
	if (argc >= 2 && !strcmp(argv[1], "player"))
		return do_player(argc - 2, argv + 2);
	if (argc >= 2 && !strcmp(argv[1], "disk"))
		return do_disk(argc - 2, argv + 2);
	fprintf(stderr, "usage: seedload send|vsend|msend|recv|player|disk ... (see the comment at the top)\n");
	return 2;
}
