package io.kinesisspark.fetch

import java.io.{ByteArrayOutputStream, ObjectOutputStream}

import scala.util.control.NonFatal

import io.kinesisspark.KinesisSparkException

/**
 * A prefetch task's error, carried to the driver in the task's result instead of failing the task.
 *
 * Why: Spark runs a failed task again, and under `spark.speculation` copies a slow one; a second attempt of a
 * prefetch task fetches nothing (two readers of one shard would double its GetRecords calls, or take an enhanced
 * fan-out subscription from each other, and the losing copy's blocks would never be indexed). An error that failed
 * the task would then be swallowed by the empty retry, so the task reports it instead, and the driver fails the
 * query with it. It travels as itself when it serializes (the connector's own errors do), else as a
 * [[KinesisSparkException]] with the same text, class name and stack (SDK errors may hold an unserializable
 * response).
 *
 * {{{
 *   catch { case NonFatal(e) => Seq(result.copy(failure = Some(FetchFailure.portable(e)))) }
 * }}}
 */
object FetchFailure {
  def portable(e: Throwable): Throwable =
    if (serializes(e)) e
    else {
      val copy = new KinesisSparkException(s"${e.getClass.getName}: ${e.getMessage}",
        Option(e.getCause).map(portable).orNull)
      copy.setStackTrace(e.getStackTrace)
      copy
    }

  private def serializes(e: Throwable): Boolean =
    try {
      val out = new ObjectOutputStream(new ByteArrayOutputStream())
      try { out.writeObject(e); true } finally out.close()
    } catch { case NonFatal(_) => false } // NotSerializableException, or a field's writeObject failing
}
