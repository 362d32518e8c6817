package org.apache.spark.kinesisspark

import java.nio.ByteBuffer

import org.apache.spark.SparkEnv
import org.apache.spark.storage.{StorageLevel, StreamBlockId}
import org.apache.spark.util.io.ChunkedByteBuffer

/**
 * The connector's one bridge into Spark-private API: prefetched records live as blocks in the BlockManager of
 * the executor that fetched them. Blocks are reported to the master (so other executors can read them and
 * `removeBlock` reaches them) and may spill to disk under memory pressure rather than fail.
 */
object BlockStoreBridge {
  private val Level = StorageLevel.MEMORY_AND_DISK_SER

  /** Stores `bytes` under (streamId, uniqueId) on this JVM; returns where a task should run to read it locally. */
  def put(streamId: Int, uniqueId: Long, bytes: Array[Byte]): Option[String] = {
    val stored = SparkEnv.get.blockManager.putBytes[Array[Byte]](
      StreamBlockId(streamId, uniqueId), new ChunkedByteBuffer(ByteBuffer.wrap(bytes)), Level, tellMaster = true)
    if (stored) Some(location) else None
  }

  /** This JVM as a task location ("executor_<host>_<id>"), so tasks can be sent back to their blocks. */
  def location: String = {
    val id = SparkEnv.get.blockManager.blockManagerId
    s"executor_${id.host}_${id.executorId}"
  }

  /** The block's bytes, from this executor or a remote one; `None` when the block is gone. */
  def get(streamId: Int, uniqueId: Long): Option[Array[Byte]] = {
    val bm = SparkEnv.get.blockManager
    val id = StreamBlockId(streamId, uniqueId)
    bm.getLocalBytes(id) match {
      case Some(data) =>
        try Some(data.toChunkedByteBuffer(ByteBuffer.allocate).toArray)
        finally bm.releaseLockAndDispose(id, data)
      case None => bm.getRemoteBytes(id).map(_.toArray)
    }
  }

  // Blocks are stored with tellMaster = true, so the driver's block manager master knows every one of them and the
  // filters below run there alone. Asking the executors' storage endpoints too would ship the filter, a function of
  // this jar, to executors whose RPC layer cannot load the jar's classes (a ClassCastException on a real cluster).

  /** How many prefetched blocks exist in the cluster, of any query: for operators and tests checking cleanup. */
  def streamBlockCount(): Int =
    SparkEnv.get.blockManager.master.getMatchingBlockIds(_.isInstanceOf[StreamBlockId], askStorageEndpoints = false).size

  /** Drops every block of one stream instance, including any left by failed or speculative fetch attempts. */
  def removeAll(streamId: Int): Unit = {
    val master = SparkEnv.get.blockManager.master
    master.getMatchingBlockIds({
      case StreamBlockId(`streamId`, _) => true
      case _                            => false
    }, askStorageEndpoints = false).foreach(master.removeBlock)
  }

  /** Drops a block this JVM stored (executor side), telling the master. Missing blocks are ignored. */
  def removeLocal(streamId: Int, uniqueId: Long): Unit =
    SparkEnv.get.blockManager.removeBlock(StreamBlockId(streamId, uniqueId), tellMaster = true)

  /** Drops the block wherever it is (driver side). Missing blocks are ignored. */
  def remove(streamId: Int, uniqueId: Long): Unit =
    SparkEnv.get.blockManager.master.removeBlock(StreamBlockId(streamId, uniqueId))
}
