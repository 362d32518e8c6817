package io.kinesisspark.kcl;

import java.io.IOException;
import java.io.PrintWriter;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.Base64;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.http.Protocol;
import software.amazon.awssdk.http.nio.netty.NettyNioAsyncHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.cloudwatch.CloudWatchAsyncClient;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;
import software.amazon.awssdk.services.kinesis.KinesisAsyncClient;
import software.amazon.kinesis.common.ConfigsBuilder;
import software.amazon.kinesis.common.InitialPositionInStream;
import software.amazon.kinesis.common.InitialPositionInStreamExtended;
import software.amazon.kinesis.coordinator.Scheduler;
import software.amazon.kinesis.lifecycle.events.InitializationInput;
import software.amazon.kinesis.lifecycle.events.LeaseLostInput;
import software.amazon.kinesis.lifecycle.events.ProcessRecordsInput;
import software.amazon.kinesis.lifecycle.events.ShardEndedInput;
import software.amazon.kinesis.lifecycle.events.ShutdownRequestedInput;
import software.amazon.kinesis.metrics.NullMetricsFactory;
import software.amazon.kinesis.processor.ShardRecordProcessor;
import software.amazon.kinesis.processor.SingleStreamTracker;
import software.amazon.kinesis.retrieval.KinesisClientRecord;
import software.amazon.kinesis.retrieval.polling.PollingConfig;

/**
 * A real KCL 2.x application, for the tests of option kclLeaseTable: it reads a stream from TRIM_HORIZON, and in
 * each shard given a target it checkpoints at that user record (sequence number and sub-sequence number, so inside
 * a KPL aggregate too) and records every user record up to it; the records it processes after its target are not
 * recorded, as if it stopped before checkpointing them. Shards without a target are never checkpointed. Once every
 * target is checkpointed it shuts down gracefully and exits 0 (2 if the targets are not reached in time).
 *
 * <pre>
 *   java -jar kcl-consumer.jar STREAM APPLICATION KINESIS_URL DYNAMODB_URL OUT_FILE SHARD=SEQ:SUB ...
 * </pre>
 *
 * OUT_FILE gets one line per recorded user record: shard id, sequence number, sub-sequence number, partition key
 * and the data in base64, tab-separated.
 */
public final class KclConsumer {
  private static final class Target {
    final String sequenceNumber;
    final long subSequenceNumber;

    Target(String sequenceNumber, long subSequenceNumber) {
      this.sequenceNumber = sequenceNumber;
      this.subSequenceNumber = subSequenceNumber;
    }
  }

  public static void main(String[] args) throws Exception {
    if (args.length < 6) {
      System.err.println("usage: KclConsumer STREAM APPLICATION KINESIS_URL DYNAMODB_URL OUT_FILE SHARD=SEQ:SUB ...");
      System.exit(64);
    }
    String stream = args[0];
    String application = args[1];
    Map<String, Target> targets = new HashMap<>();
    for (int i = 5; i < args.length; i++) {
      String[] shardAndPosition = args[i].split("=", 2);
      String[] position = shardAndPosition[1].split(":", 2);
      targets.put(shardAndPosition[0], new Target(position[0], Long.parseLong(position[1])));
    }
    Set<String> checkpointed = ConcurrentHashMap.newKeySet();
    CountDownLatch allCheckpointed = new CountDownLatch(targets.size());
    PrintWriter out = new PrintWriter(Files.newBufferedWriter(Paths.get(args[4]), StandardCharsets.UTF_8));

    StaticCredentialsProvider credentials =
        StaticCredentialsProvider.create(AwsBasicCredentials.create("AKIDKCLTEST", "kcl-test-secret"));
    Region region = Region.US_EAST_1;
    // Plain-HTTP emulators speak HTTP/1.1 only: the SDK's default for Kinesis's async client is HTTP/2.
    KinesisAsyncClient kinesis = KinesisAsyncClient.builder().region(region).credentialsProvider(credentials)
        .endpointOverride(URI.create(args[2]))
        .httpClientBuilder(NettyNioAsyncHttpClient.builder().protocol(Protocol.HTTP1_1)).build();
    DynamoDbAsyncClient dynamo = DynamoDbAsyncClient.builder().region(region).credentialsProvider(credentials)
        .endpointOverride(URI.create(args[3])).build();
    // KCL wants a CloudWatch client; with the null metrics factory it never calls it.
    CloudWatchAsyncClient cloudWatch = CloudWatchAsyncClient.builder().region(region).credentialsProvider(credentials)
        .endpointOverride(URI.create(args[3])).build();

    ConfigsBuilder configs = new ConfigsBuilder(
        new SingleStreamTracker(stream, InitialPositionInStreamExtended.newInitialPosition(InitialPositionInStream.TRIM_HORIZON)),
        application, kinesis, dynamo, cloudWatch, "kcl-test-" + UUID.randomUUID(),
        () -> new ShardRecordProcessor() {
          private String shardId;

          @Override
          public void initialize(InitializationInput input) {
            shardId = input.shardId();
          }

          @Override
          public void processRecords(ProcessRecordsInput input) {
            Target target = targets.get(shardId);
            if (target == null || checkpointed.contains(shardId)) return;
            for (KinesisClientRecord r : input.records()) {
              byte[] data = new byte[r.data().remaining()];
              r.data().duplicate().get(data);
              synchronized (out) {
                out.println(String.join("\t", shardId, r.sequenceNumber(), Long.toString(r.subSequenceNumber()),
                    r.partitionKey(), Base64.getEncoder().encodeToString(data)));
                out.flush();
              }
              if (r.sequenceNumber().equals(target.sequenceNumber) && r.subSequenceNumber() == target.subSequenceNumber) {
                try {
                  input.checkpointer().checkpoint(r.sequenceNumber(), r.subSequenceNumber());
                } catch (Exception e) {
                  throw new IllegalStateException("checkpoint at " + shardId + "/" + r.sequenceNumber(), e);
                }
                checkpointed.add(shardId);
                allCheckpointed.countDown();
                return;
              }
            }
          }

          @Override
          public void leaseLost(LeaseLostInput input) {}

          @Override
          public void shardEnded(ShardEndedInput input) {
            try {
              input.checkpointer().checkpoint();
            } catch (Exception e) {
              throw new IllegalStateException("checkpoint at the end of " + shardId, e);
            }
          }

          @Override
          public void shutdownRequested(ShutdownRequestedInput input) {}
        });

    Scheduler scheduler = new Scheduler(
        configs.checkpointConfig(),
        configs.coordinatorConfig().parentShardPollIntervalMillis(500),
        // Leases taken within seconds rather than KCL's default 10 s failover time: tests wait for them.
        configs.leaseManagementConfig().failoverTimeMillis(3000).shardSyncIntervalMillis(1000),
        configs.lifecycleConfig(),
        configs.metricsConfig().metricsFactory(new NullMetricsFactory()),
        configs.processorConfig(),
        configs.retrievalConfig().retrievalSpecificConfig(new PollingConfig(stream, kinesis)
            .idleTimeBetweenReadsInMillis(200)));
    Thread worker = new Thread(scheduler, "kcl-scheduler");
    worker.setDaemon(true);
    worker.start();
    boolean reached = allCheckpointed.await(120, TimeUnit.SECONDS);
    scheduler.startGracefulShutdown().get(60, TimeUnit.SECONDS);
    synchronized (out) {
      out.close();
    }
    System.out.println(reached ? "checkpointed " + checkpointed : "not every target was reached: " + checkpointed);
    System.exit(reached ? 0 : 2);
  }
}
