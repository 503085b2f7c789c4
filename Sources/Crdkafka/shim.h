// librdkafka needs no C shim: every variadic call has an array form
// (rd_kafka_produceva instead of rd_kafka_producev), so Swift calls it directly.
#include <librdkafka/rdkafka.h>
// The in-process mock cluster (test.mock.num.brokers) that MarqueeKafka's unit tests run on.
#include <librdkafka/rdkafka_mock.h>
