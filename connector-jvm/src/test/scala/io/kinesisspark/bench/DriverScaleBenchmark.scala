package io.kinesisspark.bench

import java.nio.file.Files

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.streaming.{StreamingQueryProgress, Trigger}


/**
 * The driver's cost per micro-batch at shard counts no emulator holds (issue 17: 10,000 shards), against an
 * in-memory Kinesis ([[SteadyKinesisApi]]: every shard receives [[RecordsPerSecond]] records a second, for ever),
 * installed in place of the SDK client for the query's connection: what `latestOffset`, `planInputPartitions` and
 * `commit` take (the source's `driver*Ms` metrics), the offset's size, and the batches' rows. Kinesis takes no time
 * here, so what is printed is the connector's and Spark's own cost. Local mode on 2 cores: the prefetch tasks run in
 * this JVM too, on the same fake, and a batch every [[TriggerMs]] reads what every shard received since the last.
 *
 * {{{
 *   build/sbt "connector/Test/runMain io.kinesisspark.bench.DriverScaleBenchmark 1000 10000"
 * }}}
 *
 * Batches of the first [[WarmUpSeconds]] are left out: the JIT and the first listing and prefetch round.
 */
object DriverScaleBenchmark {
  val RecordsPerSecond = 2.0
  val RecordBytes = 100
  val TriggerMs = 1000L
  val WarmUpSeconds = 20
  val MeasuredSeconds = 40
  private val Calls = Seq("driverLatestOffsetMs", "driverPlanInputPartitionsMs", "driverCommitMs")
  private val CpuCalls = Seq("driverLatestOffsetCpuMs", "driverPlanInputPartitionsCpuMs", "driverCommitCpuMs")

  final case class BatchCost(id: Long, rows: Long, calls: Seq[Option[Double]], cpuCalls: Seq[Option[Double]],
      offsetBytes: Option[Long], triggerMs: Long) {
    def driverMs: Double = calls.flatten.sum
    /** The CPU the query thread used in the calls: their time less any wait for a core the executors held. */
    def driverCpuMs: Double = cpuCalls.flatten.sum
  }

  def main(args: Array[String]): Unit = {
    val counts = if (args.isEmpty) Seq(1000, 10000) else args.toSeq.map(_.toInt)
    val spark = SparkSession.builder().master("local[2]").appName("kinesis-spark driver scale")
      .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "2")
      // A progress event for every trigger, also those that found nothing new (Spark's default reports one of those
      // every 10 s): the query thread's CPU goes to them too, and the table counts them.
      .config("spark.sql.streaming.noDataProgressEventInterval", "0").getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    try {
      val results = counts.map(n => n -> run(spark, n))
      println()
      println("| shards | batches | rows/s | driver ms/batch median (max) | driver CPU ms/batch median (max) | " +
        "latestOffset ms median | " +
        "planInputPartitions ms median | commit ms median | triggers without data | query thread CPU ms/batch | " +
        "offset bytes per shard | " +
        "batch ms median | prefetch task ms median (max) | batch task wait for a slot ms median (max) |")
      println("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
      results.foreach { case (n, (batches, idle, cpuPerBatch, waits)) =>
        val driver = batches.map(_.driverMs)
        val driverCpu = batches.map(_.driverCpuMs)
        def med(i: Int) = fmt(median(batches.flatMap(_.calls(i))))
        val perShard = batches.flatMap(_.offsetBytes).lastOption.map(b => f"${b.toDouble / n}%.1f").getOrElse("-")
        val rowsPerSecond = batches.map(_.rows).sum.toDouble / MeasuredSeconds
        println(f"| $n%,d | ${batches.size} | $rowsPerSecond%,.0f | ${fmt(median(driver))} (${fmt(maximum(driver))}) | " +
          f"${fmt(median(driverCpu))} (${fmt(maximum(driverCpu))}) | ${med(0)} | ${med(1)} | ${med(2)} | " +
          f"$idle | $cpuPerBatch%.1f | $perShard | " +
          s"${fmt(median(batches.map(_.triggerMs.toDouble)))} | ${waits.prefetch._2} (${waits.prefetch._3}) | " +
          s"${waits.batchWait._2} (${waits.batchWait._3}) |")
      }
    } finally spark.stop()
  }

  /** The batches with data, how many triggers found none, the query thread's CPU per batch, and task waits. */
  private def run(spark: SparkSession, shards: Int): (Seq[BatchCost], Int, Double, TaskWaits.Summary) = {
    val stream = s"scale-$shards"
    val options = SteadyKinesisApi.installed(new SteadyKinesisApi(stream, shards, RecordsPerSecond, RecordBytes),
      Map("maxShardsPerDescribe" -> "10000"))
    val checkpoint = Files.createTempDirectory("driver-scale").toString
    val waits = new TaskWaits
    spark.sparkContext.addSparkListener(waits)
    val query = spark.readStream.format("kinesis").options(options).load()
      .writeStream.format("noop").option("checkpointLocation", checkpoint)
      .trigger(Trigger.ProcessingTime(TriggerMs)).start()
    try {
      Thread.sleep(WarmUpSeconds * 1000L)
      val firstMeasured = query.lastProgress match {
        case null => 0L
        case p    => p.batchId + 1
      }
      val cpuBefore = streamThreadCpuNanos()
      waits.reset()
      Thread.sleep(MeasuredSeconds * 1000L)
      val cpu = streamThreadCpuNanos() - cpuBefore
      query.exception.foreach(e => throw e)
      val progress = query.recentProgress.toSeq.filter(_.batchId >= firstMeasured)
      val batches = progress.filter(_.numInputRows > 0).map(cost)
      // The query thread's own CPU: on this 2-core machine the executors' tasks share the cores, so the calls' wall
      // time is the CPU they need plus the time they waited for a core.
      // Charged to the batches with data: a trigger that finds nothing new still asks the source for an end offset.
      val idle = progress.size - batches.size
      val cpuPerBatch = cpu / 1e6 / math.max(1, batches.size)
      println(f"$shards shards: ${batches.size} batches measured, $idle triggers found no new data; the query thread " +
        f"used $cpuPerBatch%.1f ms of CPU per batch with data")
      batches.foreach(b => println(f"  batch ${b.id}%3d rows ${b.rows}%,9d driver ${b.driverMs}%8.1f ms " +
        f"(CPU ${b.driverCpuMs}%.1f) " +
        b.calls.map(c => fmt(c)).mkString("(", " / ", ")") + s" offset ${b.offsetBytes.getOrElse("-")} B, " +
        s"trigger ${b.triggerMs} ms"))
      println(s"  ${waits.summary}")
      (batches, idle, cpuPerBatch, waits.summary)
    } finally { query.stop(); spark.sparkContext.removeSparkListener(waits) }
  }

  /** CPU time of the streaming query's thread (Spark names it "stream execution thread for ..."). */
  private def streamThreadCpuNanos(): Long = {
    val bean = java.lang.management.ManagementFactory.getThreadMXBean
    Thread.getAllStackTraces.keySet.asScala.filter(_.getName.startsWith("stream execution thread"))
      .map(t => bean.getThreadCpuTime(t.getId)).filter(_ >= 0).sum
  }

  private def cost(p: StreamingQueryProgress): BatchCost = {
    val metrics = p.sources.head.metrics.asScala
    def number(name: String) = metrics.get(name).flatMap(v => scala.util.Try(v.toDouble).toOption)
    BatchCost(p.batchId, p.numInputRows, Calls.map(number), CpuCalls.map(number), number("offsetBytes").map(_.toLong),
      Option(p.durationMs.get("triggerExecution")).map(_.longValue).getOrElse(0L))
  }

  private def median(xs: Seq[Double]): Option[Double] =
    if (xs.isEmpty) None else Some(xs.sorted.apply(xs.size / 2))

  private def maximum(xs: Seq[Double]): Option[Double] = if (xs.isEmpty) None else Some(xs.max)

  private def fmt(x: Option[Double]): String = x.fold("-")(v => f"$v%.1f")
}
