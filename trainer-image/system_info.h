#ifndef BSW_TRAINER_SYSTEM_INFO_H_
#define BSW_TRAINER_SYSTEM_INFO_H_

namespace bsw::trainer {

// CPUs this process may run on (its affinity mask), at least 1.
int CoresAvailable();

// Whether the CPU has native bf16 arithmetic (AVX512-BF16 or AMX-BF16).
bool CpuSupportsBf16();

// Resident set size of this process in bytes, 0 when unknown.
double ResidentSetBytes();

// CPU time (user + system) consumed so far by this process, all threads, in seconds.
double ProcessCpuSeconds();

}  // namespace bsw::trainer

#endif  // BSW_TRAINER_SYSTEM_INFO_H_
