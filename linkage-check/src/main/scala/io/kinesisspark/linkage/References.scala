package io.kinesisspark.linkage

import java.io.File
import java.util.zip.ZipFile

import scala.collection.mutable
import scala.jdk.CollectionConverters._

import org.objectweb.asm.{ClassReader, ClassVisitor, Handle, Label, MethodVisitor, Opcodes, Type}

/** A link the JVM makes when code of ours runs: to a class, or to a method or field of `owner`. */
final case class Reference(owner: String, member: Option[Member], isField: Boolean, fromClass: String,
    fromMethod: Option[Member]) {
  def target: String = member.fold(s"class $owner")(m => s"${if (isField) "field" else "method"} $owner.$m")
  def site: String = fromClass + fromMethod.fold("")(m => s".$m")
}

/**
 * Every reference the connector's own classes make (every class of the jar but the relocated libraries under
 * `io/kinesisspark/shaded/`: `io/kinesisspark/`, and the bridge to Spark-private API in `org/apache/spark/kinesisspark/`):
 * supertypes, and in method bodies the classes, methods and fields that instructions, lambdas and constants name.
 *
 * {{{
 *   val refs = References.of(new File("kinesis-spark-assembly_2.13-0.1.0.jar"))
 *   refs.references.filter(_.owner.startsWith("org/apache/spark/"))
 * }}}
 */
final case class References(classes: Set[String], references: Seq[Reference])

object References {
  private val Shaded = "io/kinesisspark/shaded/"

  def of(jar: File): References = {
    val zip = new ZipFile(jar)
    try {
      val entries = zip.entries().asScala.map(_.getName)
        .filter(n => n.endsWith(".class") && !n.startsWith(Shaded) && !n.startsWith("META-INF/")).toSeq
      val refs = mutable.ArrayBuffer.empty[Reference]
      entries.foreach { entry =>
        val in = zip.getInputStream(zip.getEntry(entry))
        try new ClassReader(in).accept(new Collector(refs), ClassReader.SKIP_DEBUG | ClassReader.SKIP_FRAMES)
        finally in.close()
      }
      References(entries.map(_.stripSuffix(".class")).toSet, refs.toSeq)
    } finally zip.close()
  }

  /** The class an array or object type stands for, if any: `[[Lscala/Option;` is `scala/Option`. */
  private[linkage] def classOf(internalOrDescriptor: String): Option[String] = {
    val t = if (internalOrDescriptor.startsWith("[")) Type.getType(internalOrDescriptor) else Type.getObjectType(internalOrDescriptor)
    val element = if (t.getSort == Type.ARRAY) t.getElementType else t
    if (element.getSort == Type.OBJECT) Some(element.getInternalName) else None
  }

  private final class Collector(refs: mutable.ArrayBuffer[Reference]) extends ClassVisitor(Opcodes.ASM9) {
    private var current: String = _

    private def add(owner: String, member: Option[Member], isField: Boolean, from: Option[Member]): Unit =
      classOf(owner).foreach(o => refs += Reference(o, member, isField, current, from))

    override def visit(version: Int, access: Int, name: String, signature: String, superName: String,
        interfaces: Array[String]): Unit = {
      current = name
      (Option(superName).toSeq ++ interfaces).foreach(add(_, None, isField = false, None))
    }

    override def visitMethod(access: Int, name: String, descriptor: String, signature: String,
        exceptions: Array[String]): MethodVisitor = {
      val from = Some(Member(name, descriptor))
      def handle(h: Handle): Unit = {
        val isField = h.getTag <= Opcodes.H_PUTSTATIC
        add(h.getOwner, Some(Member(h.getName, h.getDesc)), isField, from)
      }
      def constant(value: Any): Unit = value match {
        case t: Type if t.getSort == Type.OBJECT => add(t.getInternalName, None, isField = false, from)
        case t: Type if t.getSort == Type.ARRAY => add(t.getDescriptor, None, isField = false, from)
        case h: Handle => handle(h)
        case _ =>
      }
      new MethodVisitor(Opcodes.ASM9) {
        override def visitTypeInsn(opcode: Int, tpe: String): Unit = add(tpe, None, isField = false, from)
        override def visitFieldInsn(opcode: Int, owner: String, name: String, desc: String): Unit =
          add(owner, Some(Member(name, desc)), isField = true, from)
        override def visitMethodInsn(opcode: Int, owner: String, name: String, desc: String, itf: Boolean): Unit =
          add(owner, Some(Member(name, desc)), isField = false, from)
        override def visitInvokeDynamicInsn(name: String, desc: String, bsm: Handle, args: Object*): Unit = {
          handle(bsm)
          args.foreach(constant)
        }
        override def visitLdcInsn(value: Any): Unit = constant(value)
        override def visitMultiANewArrayInsn(desc: String, dims: Int): Unit = add(desc, None, isField = false, from)
        override def visitTryCatchBlock(start: Label, end: Label, handler: Label, tpe: String): Unit =
          Option(tpe).foreach(add(_, None, isField = false, from))
      }
    }
  }
}
