package io.kinesisspark.sink

import java.util.concurrent.Executor

import scala.collection.mutable

import io.kinesisspark.aws.{PutEntry, PutEntryResult}

/**
 * PutRecords for unit tests of the sink: stores entries per stream in the order calls are answered, and refuses
 * entries or whole calls as `refuse` and `failCall` decide (given the call's number, from 1, and the entry).
 * `calls` keeps every call's entries. `clock` is the fake time the sender sees; `sleep` advances it.
 */
final class FakePutRecords {
  val stored = mutable.Map.empty[String, mutable.ArrayBuffer[PutEntry]]
  val calls = mutable.ArrayBuffer.empty[(String, IndexedSeq[PutEntry])]
  var refuse: (Int, PutEntry) => Option[String] = (_, _) => None
  var failCall: Int => Option[Throwable] = (_: Int) => None
  var now = 0L
  val sleeps = mutable.ArrayBuffer.empty[Long]

  def put(stream: String, entries: IndexedSeq[PutEntry]): IndexedSeq[PutEntryResult] = synchronized {
    calls += ((stream, entries))
    val call = calls.size
    failCall(call).foreach(e => throw e)
    entries.map { e =>
      refuse(call, e) match {
        case Some(code) => PutEntryResult.failed(code, s"refused in call $call")
        case None =>
          val shard = stored.getOrElseUpdate(stream, mutable.ArrayBuffer.empty)
          shard += e
          PutEntryResult.stored("shardId-000000000000", shard.size.toString)
      }
    }
  }

  def clock(): Long = now
  def sleep(ms: Long): Unit = { sleeps += ms; now += ms }

  def data(stream: String): Seq[String] = stored.getOrElse(stream, Nil).map(e => new String(e.data, "UTF-8")).toSeq
}

/** Runs each call at once, on the caller's thread. */
object InlineExecutor extends Executor {
  override def execute(command: Runnable): Unit = command.run()
}

/** Holds calls until `runAll`, to see how many a sender keeps in flight. */
final class HeldExecutor extends Executor {
  val held = mutable.Queue.empty[Runnable]
  override def execute(command: Runnable): Unit = held.enqueue(command)
  def runAll(): Unit = while (held.nonEmpty) held.dequeue().run()
}
