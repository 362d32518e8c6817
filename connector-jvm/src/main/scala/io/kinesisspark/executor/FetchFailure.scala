package io.kinesisspark.executor

import java.io.{ByteArrayOutputStream, ObjectOutputStream}

import scala.util.control.NonFatal

import io.kinesisspark.KinesisSparkException

/**
 * A prefetch's error, carried to the driver in its result: the executor's [[FetchService]] fetches outside any
 * Spark task, so there is no task to fail, and the driver fails the query with it. It travels as itself when it
 * serializes (the connector's own errors do), else as a
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
