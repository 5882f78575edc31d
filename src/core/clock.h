/* The one clock for durations, rates and deadlines: CLOCK_MONOTONIC (never
 * jumps with the wall clock). */
#ifndef CE_CLOCK_H
#define CE_CLOCK_H

/* Seconds / milliseconds since an arbitrary fixed point. */
double ce_mono_s(void);
double ce_mono_ms(void);

#endif
