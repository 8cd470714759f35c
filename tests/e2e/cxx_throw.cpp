// SPDX-License-Identifier: BSD-2-Clause
/*
 * cxx_throw: C++ whose hot path runs through libstdc++ and libgcc_s, which Debian builds without
 * frame pointers. A std::thread (started by libstdc++'s thread routine) computes in compute_step
 * and throws and catches a std::runtime_error every few iterations, so a good share of its time is
 * spent in __cxa_throw and _Unwind_RaiseException. The stacks of those samples only reach
 * worker_loop (and on to the thread's start) when they are walked with .eh_frame tables.
 * Built -O2 -fomit-frame-pointer.
 *
 * Usage: cxx_throw [SECONDS]   (0 or no argument: run until killed)
 */
#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <thread>

static volatile unsigned long sink;

__attribute__((noinline)) static unsigned long compute_step(unsigned long n)
{
	unsigned long acc = sink;

	for (unsigned long i = 0; i < n; i++) {
		acc = acc * 6364136223846793005UL + 1442695040888963407UL;
		__asm__ volatile("" : "+r"(acc)::"memory");
	}
	return acc;
}

__attribute__((noinline)) static void maybe_throw(unsigned long round)
{
	if (round % 2 == 0)
		throw std::runtime_error("odd round");
	sink = sink + compute_step(100);
}

__attribute__((noinline)) static void worker_loop(double seconds)
{
	auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);

	for (unsigned long round = 0;; round++) {
		try {
			maybe_throw(round);
		} catch (const std::exception &e) {
			sink = sink + e.what()[0];
		}
		if (seconds > 0 && (round & 1023) == 0 && std::chrono::steady_clock::now() >= deadline)
			break;
	}
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? std::atof(argv[1]) : 0;
	std::thread worker(worker_loop, seconds);

	worker.join();
	return 0;
}
