package io.kinesisspark.bench

import java.nio.file.Files

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.streaming.Trigger


/**
 * The connector's own cost per record (issue 17), with Kinesis out of the way: an in-memory Kinesis
 * ([[SteadyKinesisApi]]) of [[DefaultShards]] shards (or as many as the first argument says), each receiving more
 * than the 2 MB/s a shard serves, so the query reads as fast as the machine lets it; against Spark's
 * `rate-micro-batch` source, in the same run, writing the same rows (100 bytes of data, a partition key, a timestamp)
 * to the same `noop` sink. Each source reads for [[WarmUpSeconds]], then [[MeasuredSeconds]] are measured, and the
 * two take turns [[DefaultRepeats]] times (or as many as the second argument says), after one unmeasured query of
 * each (the JIT's first compilations): rows/s over those wall times,
 * and the JVM's CPU-seconds per million rows (driver and executors: local mode on this machine's cores). The Kinesis
 * side includes making up the records, which a real Kinesis does on its own machines: the fake counts the CPU it
 * spends in `getRecords`, and the CPU per row against `rate` is printed with and without it.
 *
 * {{{
 *   build/sbt "connector/Test/runMain io.kinesisspark.bench.ReadPathBenchmark [shards] [repeats]"
 * }}}
 */
object ReadPathBenchmark {
  /** The shard count unless the first argument gives another. */
  val DefaultShards = 256
  /** Above what a shard serves at `maxFetchRate` 2.0 (about 20,000 records of this size a second). */
  val RecordsPerSecondPerShard = 30000.0
  val RecordBytes = 100
  val WarmUpSeconds = 20
  val MeasuredSeconds = 30
  /** Times each source is measured, in turn, unless the second argument says otherwise. */
  val DefaultRepeats = 2

  /** @param kinesisCpuSeconds what of `cpuSeconds` the in-memory Kinesis spent making records up */
  final case class Result(source: String, rows: Long, seconds: Double, cpuSeconds: Double, kinesisCpuSeconds: Double) {
    def rowsPerSecond: Double = rows / seconds
    def cpuPerMillion: Double = cpuSeconds / (rows / 1e6)
    /** CPU per million rows without the in-memory Kinesis's: the connector's and Spark's alone. */
    def connectorCpuPerMillion: Double = (cpuSeconds - kinesisCpuSeconds) / (rows / 1e6)
  }

  object Result {
    /** The windows of one source as one: their rows, seconds and CPU summed. */
    def total(windows: Seq[Result]): Result = Result(windows.head.source, windows.map(_.rows).sum,
      windows.map(_.seconds).sum, windows.map(_.cpuSeconds).sum, windows.map(_.kinesisCpuSeconds).sum)
  }

  def main(args: Array[String]): Unit = {
    val shards = args.headOption.map(_.toInt).getOrElse(DefaultShards)
    val repeats = args.lift(1).map(_.toInt).getOrElse(DefaultRepeats)
    require(repeats >= 1, s"repeats must be at least 1, not $repeats")
    val spark = SparkSession.builder().master("local[2]").appName("kinesis-spark read path")
      .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "2")
      .config("spark.sql.streaming.numRecentProgressUpdates", "1000").getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    val cores = spark.sparkContext.defaultParallelism
    try {
      val stream = "read-path"
      val api = new SteadyKinesisApi(stream, shards, RecordsPerSecondPerShard, RecordBytes)
      val options = SteadyKinesisApi.installed(api, Map(
        "maxFetchRate" -> "2.0", "minFetchPeriod" -> "200ms",
        // Fetching outruns the machine: the buffer stays small rather than growing towards its 20 GB default.
        "fetchBufferSize" -> "256mb",
        // A round of one fetch thread per core, 1 s long: with the defaults (5 shards a thread, rounds of up to
        // 10 s) every thread of a round reads for its full 10 s when Kinesis keeps up, and the first batch waits for
        // the whole round.
        "shardsPerTask" -> math.max(1, shards / cores).toString, "maxFetchDuration" -> "1s"))
      // rate-micro-batch: a fixed number of rows a batch, however long the last one took (the time-based `rate`
      // source's batches grow without bound once it outruns the machine).
      def rate(): Result = measure(spark, "rate", spark.readStream.format("rate-micro-batch")
        .option("rowsPerBatch", "1000000").option("numPartitions", cores.toString).load()
        .selectExpr(s"cast(repeat('x', $RecordBytes) as binary) as data", "cast(value % 64 as string) as partitionKey",
          "timestamp"), () => 0L)
      def kinesis(): Result = measure(spark, "kinesis", spark.readStream.format("kinesis").options(options).load()
        .selectExpr("data", "partitionKey", "approximateArrivalTimestamp as timestamp"), () => api.cpuNanos.sum())
      // First one unmeasured query of each: the JIT compiles each source's own code (and the Spark code both use)
      // the first time it runs, still busy 40 s in. Without this, the source measured second paid for the code
      // only it runs while the first paid for the shared part (in a profiled run, the JIT's threads took 1 to 3.5
      // CPU-seconds in each 5 s of the first Kinesis query's first 30 s, and 0.5 to 1 in the second query's).
      println("warm-up (not measured): one query of each source")
      rate()
      kinesis()
      // Each source measured `repeats` times, in turn: this machine's speed drifts by tens of percent over minutes,
      // and alternating spreads that drift over both.
      val results = (1 to repeats).flatMap(_ => Seq(rate(), kinesis()))
      val (rates, kinesises) = results.partition(_.source == "rate")
      val (r, k) = (Result.total(rates), Result.total(kinesises))
      println()
      println("| source | rows | seconds | rows/s | rows/s per core | CPU s per million rows | " +
        "of which the in-memory Kinesis's |")
      println("|---|---|---|---|---|---|---|")
      (results :+ r.copy(source = "rate, all windows") :+ k.copy(source = "kinesis, all windows")).foreach { x =>
        println(f"| ${x.source} | ${x.rows}%,d | ${x.seconds}%.1f | ${x.rowsPerSecond}%,.0f | " +
          f"${x.rowsPerSecond / cores}%,.0f | ${x.cpuPerMillion}%.2f | " +
          f"${x.cpuPerMillion - x.connectorCpuPerMillion}%.2f |")
      }
      println(f"kinesis / rate over all windows, rows/s: ${k.rowsPerSecond / r.rowsPerSecond}%.2f; " +
        f"CPU per row: ${k.cpuPerMillion / r.cpuPerMillion}%.2f, " +
        f"without the in-memory Kinesis's: ${k.connectorCpuPerMillion / r.cpuPerMillion}%.2f ($cores cores)")
    } finally spark.stop()
  }

  /** Rows the query wrote over the measured seconds, by its progress reports, and the JVM's CPU meanwhile. */
  private def measure(spark: SparkSession, name: String, rows: DataFrame, kinesisCpuNanos: () => Long): Result = {
    val checkpoint = Files.createTempDirectory(s"read-path-$name").toString
    val waits = new TaskWaits
    spark.sparkContext.addSparkListener(waits)
    val query = rows.writeStream.format("noop").option("checkpointLocation", checkpoint)
      .trigger(Trigger.ProcessingTime(0)).start()
    try {
      Thread.sleep(WarmUpSeconds * 1000L)
      val first = Option(query.lastProgress).map(_.batchId).getOrElse(-1L)
      val (cpu0, kinesis0, t0) = (processCpuNanos(), kinesisCpuNanos(), System.nanoTime())
      waits.reset()
      Thread.sleep(MeasuredSeconds * 1000L)
      val last = Option(query.lastProgress).map(_.batchId).getOrElse(-1L)
      val (cpu1, kinesis1, t1) = (processCpuNanos(), kinesisCpuNanos(), System.nanoTime())
      query.exception.foreach(e => throw e)
      // The batches that ended in the window, over the window's wall time (a source that leaves the query waiting
      // between batches is charged for it) and the CPU the JVM used in it.
      val batches = query.recentProgress.toSeq.filter(p => p.batchId > first && p.batchId <= last)
      val result = Result(name, batches.map(_.numInputRows).sum, (t1 - t0) / 1e9, (cpu1 - cpu0) / 1e9,
        (kinesis1 - kinesis0) / 1e9)
      // The source's counters (cumulative), over the window: blocks stored on executors, one block-manager RPC each.
      def metric(p: Option[org.apache.spark.sql.streaming.StreamingQueryProgress], key: String): Option[Long] =
        p.flatMap(_.sources.headOption).flatMap(s => Option(s.metrics)).flatMap(m => Option(m.get(key))).map(_.toLong)
      val (before, after) = (query.recentProgress.find(_.batchId == first), batches.lastOption)
      val counted = for (b0 <- metric(before, "blocksStored"); b1 <- metric(after, "blocksStored");
                         r0 <- metric(before, "fetchRounds"); r1 <- metric(after, "fetchRounds")) yield (b1 - b0, r1 - r0)
      println(f"$name: ${batches.size} batches, ${result.rows}%,d rows in ${result.seconds}%.1f s" +
        counted.fold("")(c => f"; ${c._1}%,d blocks stored in ${c._2} prefetch rounds"))
      println(s"$name: ${waits.summary}")
      if (batches.isEmpty) println(s"$name: no batch ended in the window; the query's status: ${query.status}; " +
        s"its last progress: ${query.lastProgress}")
      result
    } finally { query.stop(); spark.sparkContext.removeSparkListener(waits) }
  }

  private def processCpuNanos(): Long =
    java.lang.management.ManagementFactory.getOperatingSystemMXBean match {
      case os: com.sun.management.OperatingSystemMXBean => os.getProcessCpuTime
      case _ => 0L
    }
}
