package org.apache.spark.kinesisspark

import java.lang.reflect.Method
import java.nio.ByteBuffer

import scala.annotation.tailrec
import scala.reflect.ClassTag
import scala.util.{Failure, Success, Try}
import scala.util.control.NonFatal

import org.apache.spark.SparkEnv
import org.apache.spark.storage.{BlockId, BlockManager, BlockManagerId, ByteBufferBlockData, StorageLevel, StreamBlockId}
import org.apache.spark.util.io.ChunkedByteBuffer

/**
 * The connector's one bridge into Spark-private API: prefetched records live as blocks in the BlockManager of
 * the executor that fetched them. Blocks are reported to the master (so other executors can read them and
 * `removeBlock` reaches them) and may spill to disk under memory pressure rather than fail.
 */
object BlockStoreBridge {
  private val Level = StorageLevel.MEMORY_AND_DISK_SER

  /**
   * `BlockManager.putBytes`, found at run time: being Spark-private, its parameters change between Spark lines that
   * the same jar runs on (Spark 4.3 added two after `tellMaster`, with defaults; the linkage check of
   * tests-integration/test_spark_linkage.py caught the compiled call failing there). Every Spark line so far has one.
   */
  private lazy val PutBytes: Method = classOf[BlockManager].getMethods.filter(_.getName == "putBytes") match {
    case Array(one) => one
    case found => throw new IllegalStateException(s"BlockManager has ${found.length} putBytes methods; expected one")
  }
  private val BytesTag = ClassTag(classOf[Array[Byte]])

  /**
   * Stores `chunks` (each positioned at 0, up to its limit; kept as they are, not copied) as one block under
   * (streamId, uniqueId) on this JVM; returns where a task should run to read it locally.
   */
  def put(streamId: Int, uniqueId: Long, chunks: Seq[ByteBuffer]): Option[String] = {
    val bm = SparkEnv.get.blockManager
    // (blockId, bytes, level, tellMaster, <the line's defaults for any others>, classTag)
    val last = PutBytes.getParameterCount - 1
    val args = Array.tabulate[AnyRef](PutBytes.getParameterCount) {
      case 0 => StreamBlockId(streamId, uniqueId)
      case 1 => new ChunkedByteBuffer(chunks.toArray)
      case 2 => Level
      case 3 => java.lang.Boolean.TRUE // tellMaster: other executors can read the block, removeBlock reaches it
      case `last` => BytesTag
      case i => classOf[BlockManager].getMethod(s"putBytes$$default$$${i + 1}").invoke(bm)
    }
    val stored = PutBytes.invoke(bm, args: _*).asInstanceOf[java.lang.Boolean].booleanValue()
    if (stored) Some(location) else None
  }

  /** This JVM as a task location ("executor_<host>_<id>"), so tasks can be sent back to their blocks. */
  def location: String = locationOf(SparkEnv.get.blockManager.blockManagerId)

  private def locationOf(id: BlockManagerId): String = s"executor_${id.host}_${id.executorId}"

  /** Driver side: the [[location]] of every executor (and the driver) whose block manager the master knows now. */
  def liveLocations(): Set[String] = SparkEnv.get.blockManager.master.getMemoryStatus.keySet.map(locationOf)

  /**
   * The block's bytes, from this executor or a remote one; `None` when the block is gone. A block in this executor's
   * memory is not copied: the buffers returned are the chunks it was stored as (on the heap, MEMORY_AND_DISK_SER,
   * and never written again, so they stay readable even if the block is removed meanwhile). Callers must not write
   * to them. A block from disk or from another executor comes back as one buffer, its chunks concatenated.
   */
  def get(streamId: Int, uniqueId: Long): Option[Got] = {
    val bm = SparkEnv.get.blockManager
    val id = StreamBlockId(streamId, uniqueId)
    bm.getLocalBytes(id) match {
      case Some(data) =>
        try data match {
          case inMemory: ByteBufferBlockData => Some(Got(inMemory.buffer.getChunks().toSeq, local = true))
          // Spilled to disk: read onto the heap (toByteBuffer would map a large file until the next GC).
          case other => Some(Got(Seq(other.toChunkedByteBuffer(ByteBuffer.allocate).toByteBuffer), local = true))
        } finally bm.releaseLockAndDispose(id, data)
      case None => bm.getRemoteBytes(id).map(b => Got(Seq(b.toByteBuffer), local = false))
    }
  }

  /** A block's bytes, and whether they were on this executor. */
  final case class Got(chunks: Seq[ByteBuffer], local: Boolean)

  // Blocks are stored with tellMaster = true, so the driver's block manager master knows every one of them and the
  // filters below run there alone. Asking the executors' storage endpoints too would ship the filter, a function of
  // this jar, to executors whose RPC layer cannot load the jar's classes (a ClassCastException on a real cluster).

  /** How many prefetched blocks exist in the cluster, of any query: for operators and tests checking cleanup. */
  def streamBlockCount(): Int = matching(_.isInstanceOf[StreamBlockId]).size

  /** How many prefetched blocks of one stream instance exist in the cluster. */
  def streamBlockCount(streamId: Int): Int = matching(ofStream(streamId)).size

  /** Drops every block of one stream instance, including any left by failed or speculative fetch attempts. */
  def removeAll(streamId: Int): Unit = {
    val master = SparkEnv.get.blockManager.master
    matching(ofStream(streamId)).foreach(master.removeBlock)
  }

  private def ofStream(streamId: Int): BlockId => Boolean = {
    case StreamBlockId(`streamId`, _) => true
    case _                            => false
  }

  /**
   * The master's block ids that pass `filter`. The master reads each executor's block map on a thread of its own
   * while its endpoint thread updates that map, so a query made while executors store or drop blocks (a stopping
   * query's fetches cleaning up) can fail with a ConcurrentModificationException: it is asked again.
   */
  private def matching(filter: BlockId => Boolean): Seq[BlockId] = {
    val master = SparkEnv.get.blockManager.master
    @tailrec def ask(attemptsLeft: Int): Seq[BlockId] =
      Try(master.getMatchingBlockIds(filter, askStorageEndpoints = false)) match {
        case Success(ids) => ids
        case Failure(NonFatal(_)) if attemptsLeft > 1 => Thread.sleep(MatchRetryMs); ask(attemptsLeft - 1)
        case Failure(e) => throw e
      }
    ask(MatchAttempts)
  }
  private val MatchAttempts = 5
  private val MatchRetryMs = 50L

  /** Drops a block this JVM stored (executor side), telling the master: whether it was here to drop. */
  def removeLocal(streamId: Int, uniqueId: Long): Boolean = {
    val manager = SparkEnv.get.blockManager
    val id = StreamBlockId(streamId, uniqueId)
    val here = manager.getStatus(id).isDefined
    manager.removeBlock(id, tellMaster = true)
    here && manager.getStatus(id).isEmpty
  }

  /** Drops the block wherever it is (driver side). Missing blocks are ignored. */
  def remove(streamId: Int, uniqueId: Long): Unit =
    SparkEnv.get.blockManager.master.removeBlock(StreamBlockId(streamId, uniqueId))
}
