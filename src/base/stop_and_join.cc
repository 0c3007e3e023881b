#include "base/stop_and_join.h"

namespace pg {

void StopAndJoin(std::mutex& mu, bool* stop, std::initializer_list<std::condition_variable*> wake,
                 std::initializer_list<std::thread*> threads) {
  {
    std::lock_guard<std::mutex> lock(mu);
    *stop = true;
  }
  for (std::condition_variable* cv : wake) cv->notify_all();
  for (std::thread* t : threads) t->join();
}

}  // namespace pg
