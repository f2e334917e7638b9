// grpc.health.v1 visible through server reflection: grpc++'s default health service answers
// Check and Watch but brings no descriptor, so a reflection client finds the service name and
// nothing to build a request from. The messages compiled from proto/grpc/health/v1/health.proto
// carry it.
#pragma once

namespace c2c::daemon {

// Makes sure the health descriptor is linked into the generated pool (a static library's object
// that nothing references would be dropped) before the reflection plugin starts. Idempotent.
void register_health_descriptor();

}  // namespace c2c::daemon
