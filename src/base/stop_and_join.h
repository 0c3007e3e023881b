// StopAndJoin: the end of a class whose worker threads wait on condition
// variables for a stop flag guarded by a mutex (RemoteTier,
// KvEventPublisher, the test FakeInferenceService).
#pragma once

#include <condition_variable>
#include <initializer_list>
#include <mutex>
#include <thread>

namespace pg {

// Sets *stop under mu, wakes every waiter of each condition variable in
// `wake`, then joins each thread in `threads`. Call it from the destructor,
// not from one of those threads.
void StopAndJoin(std::mutex& mu, bool* stop, std::initializer_list<std::condition_variable*> wake,
                 std::initializer_list<std::thread*> threads);

}  // namespace pg
