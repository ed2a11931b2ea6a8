/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * discover.h - finds threads in /proc (under irqres_paths.proc / .sys).
 *
 * An IRQ thread is a kernel thread (PF_KTHREAD in /proc/PID/stat field 9) whose parent
 * is kthreadd (pid 2) and whose comm is irq/<N>-<action> or irq/<N>-s-<action> (the
 * name rule: irqname.h); a user
 * process that names itself irq/11-eth0 is never one.  comm is cut at 15 characters, so
 * the IRQ number comes from comm and the full action names from /sys/kernel/irq/N/actions
 * (fallback: the directory names under /proc/irq/N/).  Each action of a shared IRQ has
 * its own thread: thread_info.actions holds the action(s) that the thread's comm names
 * (all of the IRQ's actions when the comm names none; the comm's own, maybe cut, name
 * when neither /sys/kernel/irq/N nor /proc/irq/N lists any).  thread_info's DL
 * parameters come from sched_getattr, so only when the proc root is the real /proc.
 */
#ifndef IRQRES_DISCOVER_H
#define IRQRES_DISCOVER_H

#include "irqres.h"
#include "softirqd.h"

/* Whether a thread with stat flags @flags, parent @ppid and name @comm is a threaded NAPI
 * kthread (napi/<if>-<id>, a child of kthreadd). */
bool discover_napi_comm(unsigned long flags, pid_t ppid, const char *comm);
/* Whether such a thread is a per-CPU soft IRQ kthread (softirqd.h): its kind and CPU. */
bool discover_softirqd_comm(unsigned long flags, pid_t ppid, const char *comm,
			    enum softirqd_kind *kind, int *cpu);
/*
 * Appends every IRQ thread, every threaded NAPI kthread (the device's threads) and, with
 * @softirqd, every per-CPU soft IRQ kthread (three per CPU: only a profile that selects
 * them pays for reading them) to @list (which may already hold entries; start with a
 * zeroed list).  Lists kthreadd's children from /proc/2/task/2/children when that file
 * exists, else walks /proc.  The new entries are in pid order.  Returns 0 or -errno
 * (-ENOMEM, or /proc unreadable).
 */
int discover_scan_irq(struct thread_list *list, bool softirqd);

/*
 * Appends every kernel thread that kthreadd made and that may be moved (not
 * PF_NO_SETAFFINITY: per-CPU threads are left out), IRQ threads included, to @list, as
 * discover_scan_irq does.  Returns 0 or -errno.
 */
int discover_scan_kthreads(struct thread_list *list);

/*
 * Appends every user thread (every /proc/PID/task/TID, kernel threads skipped) to @list.
 * Threads that exit during the scan are skipped silently; the new entries are in pid
 * order.  Returns 0 or -errno.
 */
int discover_scan_tasks(struct thread_list *list);

/*
 * As discover_scan_tasks, for the processes @tgids[0..n) only (process ids, each once):
 * every user thread of each. A process gone, or a kernel thread, adds nothing.
 */
int discover_scan_tasks_of(const pid_t *tgids, size_t n, struct thread_list *list);

/*
 * Reads one thread (a tid; /proc/TID works for any thread) into *@ti: everything of
 * struct thread_info.  Returns 0, -ESRCH when it does not exist (or exited meanwhile),
 * or another -errno.
 */
int discover_read(pid_t pid, struct thread_info *ti);

/* Returns 1 when @ti's thread still exists with the same starttime, 0 when not. */
int discover_still_same(const struct thread_info *ti);

/* Full action names of IRQ @irq, comma separated, into @buf.  Returns 0 or -errno. */
int discover_irq_actions(int irq, char *buf, size_t len);

/*
 * The CPUs that IRQ @irq's handler runs on, which its thread is pinned to once it has
 * run: /proc/irq/N/effective_affinity_list, or smp_affinity_list when the kernel has no
 * effective affinity file.  A new IRQ thread's own affinity is all CPUs until its first
 * interrupt, so this is what to plan with.  Returns 0; 1 when the effective affinity is
 * empty (the IRQ is not started yet; *@cpus is then smp_affinity_list); or -errno when
 * neither file can be read.
 */
int discover_irq_cpus(int irq, cpu_set_t *cpus);

/* Appends a copy of *@ti.  Returns 0 or -ENOMEM. */
int discover_list_push(struct thread_list *list, const struct thread_info *ti);
/* Frees the list's storage and leaves it empty. */
void discover_list_free(struct thread_list *list);

#endif
