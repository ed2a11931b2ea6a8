/* SPDX-License-Identifier: GPL-2.0-only */
/* mainloop.c - irqresd's poll() loop and what it waits on; see mainloop.h. */
#include "mainloop.h"
#include "ctl.h"
#include "hotplug.h"
#include "log.h"
#include "notify.h"
#include "requests.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

static int setup_signals(struct daemon *d)
{
	sigset_t mask;

	signal(SIGPIPE, SIG_IGN);	/* a client gone mid-reply is an error return, not death */
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
		return -errno;
	d->sigfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	return d->sigfd < 0 ? -errno : 0;
}

static int setup_timer(struct daemon *d)
{
	struct itimerspec its = { 0 };
	uint64_t tick = 0, now = daemon_now_ns();

	d->rescan_ns = d->opt.rescan_ns;
	d->watchdog_ns = notify_watchdog_interval_ns();
	d->next_rescan = now + d->rescan_ns;
	d->next_watchdog = now + d->watchdog_ns;
	if (d->rescan_ns)
		tick = d->rescan_ns;
	if (d->watchdog_ns && (!tick || d->watchdog_ns < tick))
		tick = d->watchdog_ns;
	d->tick_ns = tick;
	d->timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (d->timerfd < 0)
		return -errno;
	if (!tick)
		return 0;
	its.it_value.tv_sec = (time_t)(tick / NS_PER_S);
	its.it_value.tv_nsec = (long)(tick % NS_PER_S);
	its.it_interval = its.it_value;
	return timerfd_settime(d->timerfd, 0, &its, NULL) < 0 ? -errno : 0;
}

static void on_signal(struct daemon *d)
{
	struct signalfd_siginfo si;
	char err[ERRLEN];

	while (read(d->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		switch (si.ssi_signo) {
		case SIGHUP:
			daemon_reload(d, err, sizeof(err));	/* logs a refusal itself */
			break;
		default:
			pr_info("%s: restoring and exiting", strsignal((int)si.ssi_signo));
			d->quit = true;
		}
	}
}

static void on_timer(struct daemon *d)
{
	uint64_t ticks, now = daemon_now_ns();

	if (read(d->timerfd, &ticks, sizeof(ticks)) < 0 && errno != EAGAIN)
		pr_debug("timerfd: %m");
	/* a tick that comes a little before a due time counts: half a tick of slack */
	if (d->watchdog_ns && now + d->tick_ns / 2 >= d->next_watchdog) {
		notify_watchdog();
		while (d->next_watchdog <= now + d->tick_ns / 2)
			d->next_watchdog += d->watchdog_ns;
	}
	if (d->rescan_ns && now + d->tick_ns / 2 >= d->next_rescan) {
		d->rescan_now = true;
		while (d->next_rescan <= now + d->tick_ns / 2)
			d->next_rescan += d->rescan_ns;
	}
}

static int serve(struct daemon *d)
{
	struct pollfd fds[3 + 1 + CTL_CLIENTS_MAX];
	size_t n, nctl;
	int rc, timeout, ctl_timeout, pending_timeout;

	while (!d->quit) {
		n = 0;
		fds[n++] = (struct pollfd){ .fd = d->sigfd, .events = POLLIN };
		fds[n++] = (struct pollfd){ .fd = d->timerfd, .events = POLLIN };
		fds[n++] = (struct pollfd){ .fd = hotplug_fd(d->hp), .events = POLLIN };
		nctl = ctl_pollfds(d->ctl, fds + n, sizeof(fds) / sizeof(fds[0]) - n);
		timeout = d->rescan_now ? 0 : hotplug_retry_timeout_ms(d->hp);
		ctl_timeout = ctl_timeout_ms(d->ctl);
		if (ctl_timeout >= 0 && (timeout < 0 || ctl_timeout < timeout))
			timeout = ctl_timeout;
		pending_timeout = daemon_pending_timeout_ms(d);	/* threads waiting to run */
		if (pending_timeout >= 0 && (timeout < 0 || pending_timeout < timeout))
			timeout = pending_timeout;
		rc = poll(fds, n + nctl, timeout);
		if (rc < 0) {
			if (errno == EINTR)
				continue;
			rc = -errno;
			pr_err("poll: %s", strerror(-rc));
			return rc;
		}
		if (fds[0].revents)
			on_signal(d);
		if (d->quit)
			break;
		if (fds[2].revents) {
			rc = hotplug_dispatch(d->hp);
			if (rc < 0)
				pr_warn("proc connector: %s", strerror(-rc));
		}
		hotplug_run_retries(d->hp);
		daemon_run_pending(d);
		if (fds[1].revents)
			on_timer(d);
		if (d->rescan_now) {
			d->rescan_now = false;
			daemon_rescan(d);
		}
		ctl_dispatch(d->ctl, fds + n, nctl);
	}
	return 0;
}

int mainloop_run(struct daemon *d)
{
	char err[ERRLEN] = "";
	int rc, code = 0;

	rc = setup_signals(d);
	if (rc < 0) {
		pr_err("signals: %s", strerror(-rc));
		return EXIT_REFUSED;
	}
	rc = ctl_init(&d->ctl, d->socket_path, requests_handle, d, err, sizeof(err));
	if (rc < 0) {
		pr_err("control socket: %s", err);
		code = EXIT_REFUSED;
		goto out_signals;
	}
	/* without the connector (no CAP_NET_ADMIN, no kernel support) rescans carry on alone */
	hotplug_init(&d->hp, d->opt.netlink, daemon_on_hotplug, d);
	if (!d->hp) {
		pr_err("hotplug: %s", strerror(ENOMEM));
		code = EXIT_REFUSED;
		goto out_ctl;
	}
	rc = setup_timer(d);
	if (rc < 0) {
		pr_err("timerfd: %s", strerror(-rc));
		code = EXIT_REFUSED;
		goto out_hotplug;
	}
	/* threads that appeared between the apply and the subscription: one full rescan */
	d->rescan_now = d->events_lost = true;
	if (hotplug_fd(d->hp) < 0 && !d->rescan_ns)
		pr_warn("no proc connector and --rescan 0: new threads will not be reserved");
	pr_info("listening on %s%s", d->socket_path, d->have_prof ? "" : " (no profile)");
	notify_ready(d->have_prof ? "reservations in force" : "no profile");
	if (serve(d) < 0)
		code = EXIT_REFUSED;
	notify_stopping();

	close(d->timerfd);
out_hotplug:
	hotplug_fini(d->hp);
out_ctl:
	ctl_fini(d->ctl);
out_signals:
	close(d->sigfd);
	return code;
}
