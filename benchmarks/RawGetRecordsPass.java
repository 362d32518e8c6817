/*
 * The floor of polling many shards on this machine: passes of one GetRecords call over every shard of a stream, by a
 * raw client on the AWS SDK for Java v2 as the connector ships it (the shaded copy in the connector jar, its Apache
 * HTTP client, the SDK's defaults otherwise), from a pool of threads. benchmarks/latency.py's `raw-jvm-pass` mode runs it beside
 * the connector; by hand (Java's single-file launch, no build step):
 *
 *   java -Daws.cborEnabled=false -cp connector-jvm/target/scala-2.13/kinesis-spark-assembly_2.13-0.1.0.jar \
 *     benchmarks/RawGetRecordsPass.java http://127.0.0.1:4567 clicks 16 10
 *
 * Arguments: endpoint, stream, threads, passes. Prints "shards <n>", "iterators <ms>", then "pass <i> <ms> <records>"
 * per pass and "median <ms>". Passes start at least 200 ms apart: Kinesis allows 5 GetRecords calls per second per
 * shard (https://docs.aws.amazon.com/kinesis/latest/APIReference/API_GetRecords.html), so a reader at the limit cannot
 * pass over a shard more often, and a pass that takes longer is the floor of any poller's latency at that scale.
 */

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;

import io.kinesisspark.shaded.awssdk.auth.credentials.AwsBasicCredentials;
import io.kinesisspark.shaded.awssdk.auth.credentials.StaticCredentialsProvider;
import io.kinesisspark.shaded.awssdk.http.apache.ApacheHttpClient;
import io.kinesisspark.shaded.awssdk.regions.Region;
import io.kinesisspark.shaded.awssdk.services.kinesis.KinesisClient;
import io.kinesisspark.shaded.awssdk.services.kinesis.model.GetRecordsResponse;
import io.kinesisspark.shaded.awssdk.services.kinesis.model.Shard;
import io.kinesisspark.shaded.awssdk.services.kinesis.model.ShardIteratorType;

public class RawGetRecordsPass {
  private static final long MIN_PASS_SPACING_MS = 200L;

  public static void main(String[] args) throws Exception {
    if (args.length != 4) {
      System.err.println("usage: RawGetRecordsPass ENDPOINT STREAM THREADS PASSES");
      System.exit(2);
    }
    String stream = args[1];
    int threads = Integer.parseInt(args[2]);
    int passes = Integer.parseInt(args[3]);
    KinesisClient client = KinesisClient.builder()
        .endpointOverride(URI.create(args[0]))
        .region(Region.US_EAST_1)
        .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("test", "test")))
        .httpClient(ApacheHttpClient.builder().maxConnections(threads).socketTimeout(Duration.ofSeconds(30)).build())
        .build();
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      // One page: the emulators this runs against answer every shard at once (ferrokinesis refuses later pages).
      List<Shard> shards = client.listShards(b -> b.streamName(stream).maxResults(10000)).shards();
      System.out.println("shards " + shards.size());
      String[] iterators = new String[shards.size()];
      long started = System.nanoTime();
      runAll(pool, shards.size(), i -> iterators[i] = client.getShardIterator(b -> b.streamName(stream)
          .shardId(shards.get(i).shardId()).shardIteratorType(ShardIteratorType.LATEST)).shardIterator());
      System.out.println("iterators " + (System.nanoTime() - started) / 1_000_000L);
      long[] millis = new long[passes];
      for (int pass = 0; pass < passes; pass++) {
        long passStart = System.nanoTime();
        AtomicLong records = new AtomicLong();
        runAll(pool, shards.size(), i -> {
          GetRecordsResponse response = client.getRecords(b -> b.shardIterator(iterators[i]).limit(10000));
          iterators[i] = response.nextShardIterator();
          records.addAndGet(response.records().size());
        });
        millis[pass] = (System.nanoTime() - passStart) / 1_000_000L;
        System.out.println("pass " + (pass + 1) + " " + millis[pass] + " " + records.get());
        long spare = MIN_PASS_SPACING_MS - millis[pass];
        if (spare > 0) Thread.sleep(spare);
      }
      long[] sorted = millis.clone();
      Arrays.sort(sorted);
      System.out.println("median " + sorted[passes / 2]);
    } finally {
      pool.shutdownNow();
      client.close();
    }
  }

  private interface ShardCall {
    void call(int shardIndex) throws Exception;
  }

  /** Calls `call` for every shard index on the pool; returns when every call has ended, rethrowing the first failure. */
  private static void runAll(ExecutorService pool, int shards, ShardCall call) throws Exception {
    List<Future<?>> futures = new ArrayList<>(shards);
    for (int i = 0; i < shards; i++) {
      int index = i;
      futures.add(pool.submit(() -> {
        call.call(index);
        return null;
      }));
    }
    for (Future<?> future : futures) future.get();
  }
}
