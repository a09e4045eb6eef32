// QueueLink: what the command processor may ask of the transport that carries its queue.
#ifndef NVMF_TARGET_QUEUE_LINK_H_
#define NVMF_TARGET_QUEUE_LINK_H_

#include <string>
#include <string_view>

namespace nvmf::target {

// Implemented by the transport's queue (RdmaQueue), and by fakes in tests.
class QueueLink {
 public:
  virtual ~QueueLink() = default;
  // Tear this queue down soon (not from inside this call): the controller it served is gone,
  // or a new connection replaced it. Idempotent.
  virtual void request_disconnect(std::string_view reason) = 0;
  // "10.0.0.2:51234 qid 1", for logs.
  virtual std::string describe() const = 0;
};

}  // namespace nvmf::target

#endif  // NVMF_TARGET_QUEUE_LINK_H_
