#pragma once
// A run stopped on request (the Python module's KeyboardInterrupt): thrown from a progress callback,
// it unwinds the claim and reaches the caller of run_claim. Deliberately not a std::exception (as
// boost::thread_interrupted is not), so that no `catch (const std::exception&)` that turns a failure
// into an ERROR verdict swallows it; `catch (...)` sites that store and rethrow (replicates, the
// shared measurement of ClaimShape) pass it on unchanged.

namespace dyncheck::checks {

struct Cancelled {};

}  // namespace dyncheck::checks
